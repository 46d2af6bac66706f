//! One subscription connection and what arrives on it, whatever the
//! deployment:
//!
//! - one node or Sentinel: a dedicated RESP2 connection to the primary with
//!   `SUBSCRIBE` (the classic pub/sub every node of a replication group
//!   hears);
//! - Redis Cluster: a cluster connection of its own (RESP3, messages as
//!   pushes) with `SSUBSCRIBE`, one channel a command (a command's channels
//!   must share a slot), each sent to the node that owns the channel's slot.
//!
//! Besides messages, a cluster feed reports what redis-rs does not repair by
//! itself: a shard channel unsubscribed (the server's `sunsubscribe` when
//! its slot migrated, after which the client's own record drops the
//! channel; also the confirmation of the subscriber's own unsubscribe) and
//! a node connection lost (redis-rs reconnects and subscribes again what it
//! tracks, but not a channel whose subscribe failed). The subscriber
//! subscribes again; see `crate::cluster::subscriber`.

use super::connection::{RedisError, COMMAND_TIMEOUT};
use super::primary::Locator;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use redis::aio::{PubSubSink, PubSubStream};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{ConnectionInfo, PushInfo, PushKind, Value};
use tokio::sync::mpsc;

/// Pushes a cluster feed keeps waiting for the subscriber; past it, pushes
/// are dropped (the push sender must not block the connection): snapshots
/// are latest-only anyway, and presence is repaired by the periodic roster
/// reads.
pub const PUSH_QUEUE: usize = 8192;

/// What a feed delivers.
#[derive(Debug, PartialEq)]
pub enum FeedEvent {
    /// A message on `channel`, bytes as published.
    Message {
        /// The channel.
        channel: String,
        /// The payload.
        payload: Bytes,
    },
    /// The server unsubscribed this shard channel (its slot moved away).
    Unsubscribed(String),
    /// A node connection of a cluster feed was lost.
    NodeLost,
}

/// One subscription connection.
pub enum Feed {
    /// Classic pub/sub on one connection.
    Node {
        /// Commands.
        sink: PubSubSink,
        /// Messages.
        stream: PubSubStream,
    },
    /// Sharded pub/sub on a cluster connection.
    Cluster {
        /// Commands, routed by slot.
        conn: ClusterConnection,
        /// Messages and notices, as pushes.
        pushes: mpsc::Receiver<PushInfo>,
    },
}

impl Feed {
    /// A feed on the primary `locator` finds now.
    ///
    /// Errors: no primary, or it cannot be reached within the command timeout.
    pub async fn node(locator: &Locator) -> Result<Feed, RedisError> {
        let open = async {
            let client = locator.client().await?;
            let (sink, stream) = client.get_async_pubsub().await?.split();
            Ok(Feed::Node { sink, stream })
        };
        tokio::time::timeout(COMMAND_TIMEOUT * 2, open).await.unwrap_or(Err(RedisError::Timeout))
    }

    /// A feed on the cluster the `seeds` belong to (a fresh slot map).
    ///
    /// Errors: no seed answers with the cluster's slots in time.
    pub async fn cluster(seeds: &[ConnectionInfo]) -> Result<Feed, RedisError> {
        let (tx, pushes) = mpsc::channel(PUSH_QUEUE);
        let sender = move |info: PushInfo| tx.try_send(info);
        let client = ClusterClientBuilder::new(seeds.to_vec())
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(sender)
            .connection_timeout(COMMAND_TIMEOUT)
            .response_timeout(COMMAND_TIMEOUT)
            .retries(2)
            .build()?;
        let connect = client.get_async_connection();
        let conn = tokio::time::timeout(COMMAND_TIMEOUT * 2, connect).await.map_err(|_| RedisError::Timeout)??;
        Ok(Feed::Cluster { conn, pushes })
    }

    /// Subscribes to `channel` (`subscribe`), or unsubscribes from it: a
    /// future of its own, holding clones of the feed's command handles, so
    /// the feed's owner goes on reading messages while it runs and one
    /// channel's command never waits on another's (on a cluster, each goes
    /// to the node owning the channel's slot; one down holds up only its
    /// own channels).
    ///
    /// Errors: a refusal, a lost connection, or no answer within twice the
    /// command timeout.
    pub fn change(&self, channel: String, subscribe: bool) -> BoxFuture<'static, Result<(), RedisError>> {
        let run: BoxFuture<'static, redis::RedisResult<()>> = match self {
            Feed::Node { sink, .. } => {
                let mut sink = sink.clone();
                Box::pin(async move {
                    match subscribe {
                        true => sink.subscribe(&channel).await,
                        false => sink.unsubscribe(&channel).await,
                    }
                })
            }
            Feed::Cluster { conn, .. } => {
                let mut conn = conn.clone();
                Box::pin(async move {
                    match subscribe {
                        true => conn.ssubscribe(&channel).await,
                        false => conn.sunsubscribe(&channel).await,
                    }
                })
            }
        };
        within_timeout(run)
    }

    /// Checks the connection (every node of a cluster feed) answers; a
    /// future of its own, as [`Feed::change`].
    ///
    /// Errors: a node does not answer within twice the command timeout.
    pub fn ping(&self) -> BoxFuture<'static, Result<(), RedisError>> {
        let run: BoxFuture<'static, redis::RedisResult<()>> = match self {
            Feed::Node { sink, .. } => {
                let mut sink = sink.clone();
                Box::pin(async move { sink.ping::<Value>().await.map(|_| ()) })
            }
            Feed::Cluster { conn, .. } => {
                let mut conn = conn.clone();
                Box::pin(async move { redis::cmd("PING").query_async::<Value>(&mut conn).await.map(|_| ()) })
            }
        };
        within_timeout(run)
    }

    /// The next message or notice; `None` when the connection ended.
    pub async fn next(&mut self) -> Option<FeedEvent> {
        match self {
            Feed::Node { stream, .. } => {
                let m = stream.next().await?;
                let channel = m.get_channel_name().to_owned();
                Some(FeedEvent::Message { channel, payload: Bytes::copy_from_slice(m.get_payload_bytes()) })
            }
            Feed::Cluster { pushes, .. } => loop {
                if let Some(event) = event_of(pushes.recv().await?) {
                    return Some(event);
                }
            },
        }
    }
}

/// `run`, failed with [`RedisError::Timeout`] if it takes longer than twice
/// the command timeout.
fn within_timeout(run: BoxFuture<'static, redis::RedisResult<()>>) -> BoxFuture<'static, Result<(), RedisError>> {
    Box::pin(async move { Ok(tokio::time::timeout(COMMAND_TIMEOUT * 2, run).await.map_err(|_| RedisError::Timeout)??) })
}

/// What a RESP3 push means to a feed (`None`: a confirmation, nothing to do).
pub fn event_of(push: PushInfo) -> Option<FeedEvent> {
    let text = |v: Option<&Value>| match v {
        Some(Value::BulkString(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        Some(Value::SimpleString(s)) => Some(s.clone()),
        _ => None,
    };
    match push.kind {
        PushKind::Message | PushKind::SMessage => {
            let channel = text(push.data.first())?;
            match push.data.get(1) {
                Some(Value::BulkString(b)) => Some(FeedEvent::Message { channel, payload: Bytes::copy_from_slice(b) }),
                _ => None,
            }
        }
        PushKind::SUnsubscribe => text(push.data.first()).map(FeedEvent::Unsubscribed),
        PushKind::Disconnection => Some(FeedEvent::NodeLost),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(kind: PushKind, data: Vec<Value>) -> PushInfo {
        PushInfo { kind, data }
    }

    #[test]
    fn pushes_become_messages_and_notices() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        assert_eq!(
            event_of(push(PushKind::SMessage, vec![bulk("ch"), bulk("hi")])),
            Some(FeedEvent::Message { channel: "ch".into(), payload: Bytes::from_static(b"hi") })
        );
        assert_eq!(
            event_of(push(PushKind::SUnsubscribe, vec![bulk("ch"), Value::Int(0)])),
            Some(FeedEvent::Unsubscribed("ch".into()))
        );
        assert_eq!(event_of(push(PushKind::Disconnection, vec![])), Some(FeedEvent::NodeLost));
        assert_eq!(event_of(push(PushKind::SSubscribe, vec![bulk("ch"), Value::Int(1)])), None);
        assert_eq!(event_of(push(PushKind::SMessage, vec![bulk("ch")])), None, "malformed: no payload");
    }
}
