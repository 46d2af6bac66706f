//! One player through nginx, driven by hand: join over wss, send inputs and
//! chat, and wait for a particular server message.

use crate::WAIT;
use mino_loadgen::{Client, JoinRequest, ServerEvent, Target, Welcomed};
use std::time::Duration;
use tokio::time::Instant;

/// A welcomed player.
pub struct Player {
    /// Its connection.
    pub client: Client,
    /// What its Welcome said.
    pub welcome: Welcomed,
}

impl Player {
    /// Joins `target` as `name`.
    ///
    /// Panics: not welcomed within [`crate::WAIT`].
    pub async fn join(target: &Target, name: &str) -> Player {
        let req = JoinRequest { name, ..JoinRequest::default() };
        let (client, welcome) =
            Client::join(target, None, req, WAIT).await.unwrap_or_else(|e| panic!("{name} not welcomed: {e}"));
        Player { client, welcome }
    }

    /// Reads messages until `pick` returns Some, at most `limit`.
    ///
    /// Panics: the connection ends, a message fails verification, or time runs out.
    pub async fn until<T>(&mut self, limit: Duration, mut pick: impl FnMut(&ServerEvent) -> Option<T>) -> T {
        let end = Instant::now() + limit;
        loop {
            let event = match tokio::time::timeout_at(end, self.client.recv_event()).await {
                Err(_) => panic!("{}: nothing matching within {limit:?}", self.welcome.name),
                Ok(Err(end)) => panic!("{}: connection ended: {end:?}", self.welcome.name),
                Ok(Ok(e)) => e,
            };
            if let Some(t) = pick(&event) {
                return t;
            }
        }
    }
}
