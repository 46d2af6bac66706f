//! Admission, whatever the transport: from a read Hello to the player's
//! join at the tick driver. The access token is verified, the session its
//! ticket names resumed or an account signed in (into a place reserved
//! first, so a busy shard refuses before the ticket is spent), then the
//! connection is handed over in a [`Join`]; clustered, the new session is
//! stored in Redis before its welcome is released.

use super::command::{Ask, Command, Join};
use super::task::SessionContext;
use crate::admission::Refusal;
use crate::auth::{AuthError, Identity};
use crate::clock;
use crate::close::CloseReason;
use crate::hub::{Handed, Joined, Welcome};
use crate::resume::{AccountGate, Claimed, ResumeError, Ticket};
use crate::shard::{Busy, LinkId};
use crate::websocket::frame as ws_frame;
use bytes::Bytes;
use mino_protocol::client::Hello;
use mino_protocol::server as msg;
use tokio::sync::{mpsc, oneshot};

/// Why a handshake ended before admission: the reason and a frame to send
/// before the error and close frames (a Busy, websocket-framed).
#[derive(Debug)]
pub struct Refused {
    /// Why.
    pub reason: CloseReason,
    /// What goes before the Error.
    pub first: Option<Bytes>,
}

impl From<CloseReason> for Refused {
    fn from(reason: CloseReason) -> Refused {
        Refused { reason, first: None }
    }
}

/// A Busy frame to send before the close.
pub fn busy_refusal(busy: Busy) -> Refused {
    let Busy { refusal, retry_after_ms } = busy;
    let frame = ws_frame::binary(&msg::encode_busy(Refusal::label(refusal), retry_after_ms));
    Refused { reason: CloseReason::Busy, first: Some(frame) }
}

impl SessionContext {
    /// Admits the player of `hello`: verifies its token, resumes or signs
    /// in, then hands the connection `hand_over` gives to the tick driver
    /// in a [`Join`] (once handed, the connection is the hub's, admitted or
    /// refused); clustered, stores the session before the welcome is
    /// released. `Ok(Some(link))`: admitted under `link`; `Ok(None)`: the
    /// driver refused it or is gone (the hub closes the connection).
    ///
    /// Errors: refused before the hand-over (the caller closes).
    pub async fn admit(
        &self,
        hello: Hello,
        hand_over: impl FnOnce() -> Option<Handed>,
    ) -> Result<Option<LinkId>, Refused> {
        let started = clock::now();
        let capabilities = hello.capabilities;
        if capabilities.unknown() != 0 {
            tracing::debug!(
                unknown = capabilities.unknown(),
                "a Hello asked for capabilities this server does not know; the Welcome grants the others"
            );
        }
        let identity = self.identify(&hello)?;
        let resume = match (hello.resume_ticket, &identity) {
            (Some(bytes), _) => {
                let account = identity.as_ref().map(|i| i.account.as_str());
                let require = identity.is_none() && self.auth.verify(None).is_err();
                Some(Box::pin(self.claim(bytes, account, require)).await?)
            }
            (None, Some(identity)) => Some(Box::pin(self.login(identity, &hello.name)).await?),
            (None, None) => None,
        };
        let account = resume.as_ref().and_then(|c| c.account.as_deref()).map(Box::from);
        let claimed_in = started.elapsed();
        // The claim's generation: where the player was placed is written
        // only while the session is still at it.
        let resumed = resume.as_ref().map(|c| c.generation);
        let name = identity.and_then(|i| i.name).unwrap_or(hello.name);
        let store = self.store.clone();
        let commands = self.commands.clone();
        let Some(conn) = hand_over() else { return Err(CloseReason::ClientClosed.into()) };
        let (reply_tx, reply_rx) = oneshot::channel();
        let welcome = if store.is_some() { Welcome::Held } else { Welcome::Now };
        let join = Join { name: name.clone(), resume, account, capabilities, conn, welcome, reply: reply_tx };
        if commands.send(join.into()).await.is_err() {
            return Ok(None);
        }
        // From here on the connection is the hub's, admitted or refused.
        let Ok(Ok(joined)) = reply_rx.await else { return Ok(None) };
        let Joined { player, link, ticket, position } = joined;
        if let Some(store) = store {
            let mut guard = WelcomeGuard { link, commands: &commands, armed: true };
            let stored = match resumed {
                None => Box::pin(store.register(player, &name, ticket, position)).await,
                Some(generation) => Box::pin(store.placed(player, position, generation)).await,
            };
            if let Err(e) = stored {
                tracing::warn!(error = %e, %player, "session not stored in redis; it cannot resume elsewhere in place");
            }
            guard.armed = false;
            let _ = commands.send(Ask::ReleaseWelcome { link }.into()).await;
        }
        tracing::debug!(%player, resumed, ?claimed_in, welcomed_in = ?started.elapsed(), "welcomed");
        Ok(Some(link))
    }

    /// The Hello's verified identity (`None`: a guest). A Hello without a
    /// token but with a ticket passes here even when guests are refused: its
    /// claim admits only an account's session.
    pub(crate) fn identify(&self, hello: &Hello) -> Result<Option<Identity>, Refused> {
        match self.auth.verify(hello.access_token.as_deref()) {
            Ok(identity) => Ok(identity),
            Err(AuthError::Missing) if hello.resume_ticket.is_some() => Ok(None),
            Err(e) => {
                self.metrics.auth_refused(e);
                tracing::debug!(reason = e.label(), "access token refused");
                Err(CloseReason::from(e).into())
            }
        }
    }

    /// Holds a place at the tick driver for a resume or a sign-in.
    async fn reserve(&self) -> Result<(), Refused> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Ask::Reserve { reply: tx }.into()).await.map_err(|_| CloseReason::Shutdown)?;
        match rx.await {
            Err(_) => Err(self.unanswered()),
            Ok(Err(busy)) => Err(busy_refusal(busy)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Why a request the tick driver took got no answer: the shard is
    /// stopping, or the core panicked on it (caught, counted and logged
    /// there), which the peer hears as 1011.
    pub(crate) fn unanswered(&self) -> Refused {
        if self.cancel.is_cancelled() {
            CloseReason::Shutdown.into()
        } else {
            CloseReason::Internal.into()
        }
    }

    /// Gives back the place held by [`Handshake::reserve`].
    fn unreserve(&self, e: &dyn std::fmt::Display) {
        let _ = self.commands.try_send(Ask::Unreserve.into());
        tracing::debug!(error = %e, "resume or sign-in refused");
    }

    /// Reserves a place, then claims the session the ticket names (in Redis,
    /// or standalone at the tick loop), of `account` when the Hello had a
    /// token and of any account when `require` (guests refused); gives the
    /// place back if refused.
    async fn claim(&self, ticket: Vec<u8>, account: Option<&str>, require: bool) -> Result<Claimed, Refused> {
        self.reserve().await?;
        let gate = AccountGate { account, require };
        let claimed = match &self.store {
            Some(store) => {
                let now = clock::wall_ms();
                let next = Ticket::issue(now, &mut rand::rng());
                store.claim(&ticket, next, now, gate).await
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let (account, require_account) = (account.map(str::to_owned), require);
                let asked = self.commands.send(Ask::ClaimLocal { ticket, account, require_account, reply: tx }.into());
                if asked.await.is_err() {
                    return Err(CloseReason::Shutdown.into());
                }
                match rx.await {
                    Ok(answer) => answer,
                    Err(_) => {
                        self.unreserve(&"the claim got no answer");
                        return Err(self.unanswered());
                    }
                }
            }
        };
        claimed.map_err(|e| {
            self.unreserve(&e);
            if e == ResumeError::GuestSession {
                self.metrics.auth_refused(AuthError::Missing);
            }
            CloseReason::from(e).into()
        })
    }

    /// An account signs in: reserves a place, then takes the account's live
    /// session over wherever it is (its older socket is told "session
    /// replaced"), or makes its first one; gives the place back if refused.
    async fn login(&self, identity: &Identity, hello_name: &str) -> Result<Claimed, Refused> {
        self.reserve().await?;
        let name = identity.name.clone().unwrap_or_else(|| hello_name.to_owned());
        let account = identity.account.clone();
        let claimed = match &self.store {
            Some(store) => {
                let (tx, rx) = oneshot::channel();
                self.commands.send(Ask::NewId { reply: tx }.into()).await.map_err(|_| CloseReason::Shutdown)?;
                let player = match rx.await {
                    Err(_) => {
                        self.unreserve(&"no answer for a player id");
                        return Err(self.unanswered());
                    }
                    Ok(Err(busy)) => {
                        self.unreserve(&"no player id");
                        return Err(busy_refusal(busy));
                    }
                    Ok(Ok(player)) => player,
                };
                let next = Ticket::issue(clock::wall_ms(), &mut rand::rng());
                store.login(&account, &name, next, player).await.map_err(CloseReason::from)
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let asked = self.commands.send(Ask::LoginLocal { account, name, reply: tx }.into());
                if asked.await.is_err() {
                    return Err(CloseReason::Shutdown.into());
                }
                match rx.await {
                    Ok(Ok(claimed)) => Ok(claimed),
                    Ok(Err(busy)) => {
                        self.unreserve(&"no player id");
                        return Err(busy_refusal(busy));
                    }
                    Err(_) => {
                        self.unreserve(&"the sign-in got no answer");
                        return Err(self.unanswered());
                    }
                }
            }
        };
        claimed.map_err(|e| {
            self.unreserve(&e.label());
            e.into()
        })
    }
}

/// Releases a held welcome if the handshake task ends before it is done
/// with Redis (a panic): the player is never left unwelcomed.
struct WelcomeGuard<'a> {
    link: LinkId,
    commands: &'a mpsc::Sender<Command>,
    armed: bool,
}

impl Drop for WelcomeGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            // The queue is bounded: if full, the hub welcomes the player
            // after its backstop (`HELD_MAX`).
            let _ = self.commands.try_send(Ask::ReleaseWelcome { link: self.link }.into());
        }
    }
}
