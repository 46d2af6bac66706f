//! One websocket between the coordinator and an agent, carrying JSON text
//! messages both ways, with a heartbeat: each side sends `"alive"` every
//! [`HEARTBEAT`], and a side that hears nothing (no message, no heartbeat)
//! for the silence bound takes the other for gone. A killed process is seen
//! at once (its kernel closes the TCP connection); a machine that vanishes,
//! within the silence bound.
//!
//! Each message is one text frame: `"alive"` or `{"message": M}` with `M` the
//! JSON of an [`Order`](super::wire::Order) (coordinator to agent) or an
//! [`Answer`](super::wire::Answer) (agent to coordinator).

use futures_util::{SinkExt as _, StreamExt as _};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

/// How often each side says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// Messages waiting to be written, at most (a sender waits beyond).
const OUTBOX: usize = 16;

/// Messages read and not yet taken, at most (the reader waits beyond).
const INBOX: usize = 16;

/// What goes in one text frame.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Envelope<T> {
    /// The heartbeat.
    Alive,
    /// A message.
    Message(T),
}

/// Why a link ended.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkEnd {
    /// The other side closed it (a close frame, or the end of the stream).
    #[error("closed by the other side")]
    Closed,
    /// Reading or writing failed (reset, broken pipe).
    #[error("broken: {0}")]
    Broken(String),
    /// Nothing heard for this long.
    #[error("silent for {0:?}")]
    Silent(Duration),
    /// A frame that is not a message of the protocol.
    #[error("unreadable message: {0}")]
    Malformed(String),
    /// This side closed it.
    #[error("closed by this side")]
    Dropped,
}

impl LinkEnd {
    /// The reason's name in reports and logs.
    pub fn label(&self) -> &'static str {
        match self {
            LinkEnd::Closed => "closed",
            LinkEnd::Broken(_) => "broken",
            LinkEnd::Silent(_) => "silent",
            LinkEnd::Malformed(_) => "malformed",
            LinkEnd::Dropped => "dropped",
        }
    }
}

/// The sending half of a link, cheap to clone.
#[derive(Debug)]
pub struct LinkSender<Out> {
    tx: mpsc::Sender<Out>,
}

impl<Out> Clone for LinkSender<Out> {
    fn clone(&self) -> Self {
        LinkSender { tx: self.tx.clone() }
    }
}

impl<Out> LinkSender<Out> {
    /// Queues `message` for writing.
    ///
    /// Errors: the link has ended.
    pub async fn send(&self, message: Out) -> Result<(), LinkEnd> {
        self.tx.send(message).await.map_err(|_| LinkEnd::Broken("link ended".into()))
    }
}

/// A running link: send `Out`, receive `In`.
pub struct Link<Out, In> {
    sender: LinkSender<Out>,
    inbox: mpsc::Receiver<Result<In, LinkEnd>>,
    end: Option<LinkEnd>,
    /// Aborted when the link is dropped: a dropped link stops reading.
    reader: AbortOnDropHandle<()>,
    writer: JoinHandle<()>,
    /// Tells the writer to send what is queued, then the close frame.
    closing: CancellationToken,
    _in: PhantomData<In>,
}

impl<Out, In> Link<Out, In>
where
    Out: Serialize + Send + 'static,
    In: DeserializeOwned + Send + 'static,
{
    /// Starts the reader and writer tasks of `ws`; the link ends when either
    /// side closes it, it breaks, or nothing is heard for `silence`.
    pub fn start<S>(ws: WebSocketStream<S>, silence: Duration) -> Link<Out, In>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sink, stream) = ws.split();
        let (tx, rx) = mpsc::channel(OUTBOX);
        let (in_tx, inbox) = mpsc::channel(INBOX);
        let closing = CancellationToken::new();
        Link {
            sender: LinkSender { tx },
            inbox,
            end: None,
            reader: AbortOnDropHandle::new(tokio::spawn(read(stream, in_tx, silence))),
            writer: tokio::spawn(write(sink, rx, silence, closing.clone())),
            closing,
            _in: PhantomData,
        }
    }

    /// A sender for this link.
    pub fn sender(&self) -> LinkSender<Out> {
        self.sender.clone()
    }

    /// Queues `message` for writing.
    ///
    /// Errors: the link has ended.
    pub async fn send(&self, message: Out) -> Result<(), LinkEnd> {
        self.sender.send(message).await
    }

    /// The next message (heartbeats are not messages).
    ///
    /// Errors: why the link ended (again on every later call).
    pub async fn recv(&mut self) -> Result<In, LinkEnd> {
        if let Some(end) = &self.end {
            return Err(end.clone());
        }
        let next = self.inbox.recv().await.unwrap_or(Err(LinkEnd::Closed));
        if let Err(end) = &next {
            self.end = Some(end.clone());
        }
        next
    }

    /// Closes the link (a close frame after the queued messages) and waits
    /// for its tasks, at most `limit` (then they are aborted).
    pub async fn close(self, limit: Duration) {
        let Link { sender, inbox, reader, writer, closing, .. } = self;
        drop(sender);
        closing.cancel();
        if tokio::time::timeout(limit, writer).await.is_err() {
            tracing::debug!("link writer did not end within {limit:?}");
        }
        // The other side answers the close frame; no need to wait for it.
        drop(inbox);
        drop(reader);
    }
}

async fn read<S, In>(
    mut stream: futures_util::stream::SplitStream<WebSocketStream<S>>,
    inbox: mpsc::Sender<Result<In, LinkEnd>>,
    silence: Duration,
) where
    S: AsyncRead + AsyncWrite + Unpin,
    In: DeserializeOwned,
{
    let end = loop {
        let frame = match tokio::time::timeout(silence, stream.next()).await {
            Err(_) => break LinkEnd::Silent(silence),
            Ok(None) => break LinkEnd::Closed,
            Ok(Some(Err(e))) => break LinkEnd::Broken(e.to_string()),
            Ok(Some(Ok(frame))) => frame,
        };
        let text = match frame {
            Message::Text(text) => text,
            Message::Close(_) => break LinkEnd::Closed,
            Message::Binary(_) => break LinkEnd::Malformed("a binary frame".into()),
            // Pings are answered by the websocket layer.
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        match serde_json::from_str::<Envelope<In>>(text.as_str()) {
            Ok(Envelope::Alive) => {}
            Ok(Envelope::Message(m)) => {
                if inbox.send(Ok(m)).await.is_err() {
                    return;
                }
            }
            Err(e) => break LinkEnd::Malformed(e.to_string()),
        }
    };
    tracing::debug!("link ended: {end}");
    let _ = inbox.send(Err(end)).await;
}

async fn write<S, Out>(
    mut sink: futures_util::stream::SplitSink<WebSocketStream<S>, Message>,
    mut outbox: mpsc::Receiver<Out>,
    silence: Duration,
    closing: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin,
    Out: Serialize,
{
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let envelope = tokio::select! {
            biased;
            m = outbox.recv() => match m {
                Some(m) => Envelope::Message(m),
                None => break,
            },
            _ = closing.cancelled() => match outbox.try_recv() {
                Ok(m) => Envelope::Message(m),
                Err(_) => break,
            },
            _ = beat.tick() => Envelope::Alive,
        };
        let text = match serde_json::to_string(&envelope) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("message not sent: {e}");
                continue;
            }
        };
        // A side that cannot take a frame within the silence bound is as
        // good as gone; its reader ends the link the same way.
        match tokio::time::timeout(silence, sink.send(Message::text(text))).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!("link write failed: {e}");
                return;
            }
            Err(_) => return,
        }
    }
    let _ = tokio::time::timeout(silence, sink.close()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    async fn pair(silence: Duration) -> (Link<String, u32>, Link<u32, String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}/", listener.local_addr().expect("addr"));
        let accept = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            tokio_tungstenite::accept_async(tcp).await.expect("handshake")
        });
        let (client, _) = tokio_tungstenite::connect_async(url).await.expect("connect");
        let server = accept.await.expect("accepted");
        (Link::start(client, silence), Link::start(server, silence))
    }

    #[tokio::test]
    async fn messages_cross_and_heartbeats_keep_a_quiet_link_up() {
        let (mut a, mut b) = pair(Duration::from_millis(2500)).await;
        a.send("order".into()).await.expect("sent");
        assert_eq!(b.recv().await, Ok("order".to_string()));
        // Three seconds without a message: the heartbeats keep it alive.
        tokio::time::sleep(Duration::from_secs(3)).await;
        b.send(7).await.expect("sent");
        assert_eq!(a.recv().await, Ok(7));
        a.close(Duration::from_secs(1)).await;
        assert_eq!(b.recv().await, Err(LinkEnd::Closed));
        assert_eq!(b.recv().await, Err(LinkEnd::Closed), "the end is kept");
    }

    #[tokio::test]
    async fn a_peer_that_says_nothing_is_taken_for_gone() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}/", listener.local_addr().expect("addr"));
        let accept = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            tokio_tungstenite::accept_async(tcp).await.expect("handshake")
        });
        // A bare websocket: no heartbeat.
        let (_mute, _) = tokio_tungstenite::connect_async(url).await.expect("connect");
        let mut link: Link<u32, u32> = Link::start(accept.await.expect("accepted"), Duration::from_millis(300));
        assert_eq!(link.recv().await, Err(LinkEnd::Silent(Duration::from_millis(300))));
    }
}
