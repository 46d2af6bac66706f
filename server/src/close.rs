//! Why a socket closed: one variant a reason, each with one websocket close
//! code (from the schema's `CloseCode`), one metric label and one text.

use mino_protocol::client::DecodeError;
use mino_protocol::wire::CloseCode;

/// Why a socket was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer closed or disconnected.
    ClientClosed,
    /// The server is shutting down (1001).
    Shutdown,
    /// A standalone server restarts (SIGTERM) and has no other shard to move
    /// its players to (1012): come back soon, as a new player.
    Restart,
    /// Not a valid FlatBuffer, a bad field, or a second Hello (4000).
    Malformed,
    /// Unknown message type (4001).
    Unknown,
    /// Frame or message over the size limit (1009).
    TooBig,
    /// The first message was not a Hello (4002).
    HelloExpected,
    /// No Hello within the handshake timeout (4003).
    HelloTimeout,
    /// Hello with another protocol version (4004).
    ProtocolVersion,
    /// Empty, long or control-character name (4005).
    NameInvalid,
    /// Chat line empty or too long (4006).
    ChatTooLong,
    /// Inputs over the rate limit (4007).
    InputFlood,
    /// Chat over the rate limit (4008).
    ChatFlood,
    /// The socket fell behind the outbound queue or its writes blocked (4009).
    TooSlow,
    /// Nothing heard from the peer within the peer timeout (4010).
    PeerTimeout,
    /// Refused by admission (4011), after a Busy message.
    Busy,
    /// A text frame: the protocol is binary only (4012).
    TextFrame,
    /// Another socket resumed this session (4013): do not reconnect.
    SessionReplaced,
    /// The resume ticket is malformed, unknown or forged (4014).
    TicketInvalid,
    /// The resume ticket was claimed already (4015).
    TicketUsed,
    /// The resume ticket expired (4016).
    TicketExpired,
    /// The session could not be claimed now (4017): retry.
    TicketLive,
    /// The shard is draining; the Move message carried a ticket (4018).
    Moved,
    /// A websocket protocol violation (1002): bad framing (reserved bits or
    /// opcodes, an unmasked or fragmented control frame, a stray
    /// continuation), or a peer's close frame with a code RFC 6455 section
    /// 7.4 says must never be sent, or an undefined one.
    ProtocolError,
    /// A text frame or a close reason that is not UTF-8 (1007).
    InvalidUtf8,
    /// Pings and pongs over the per-socket budget (4019).
    ControlFlood,
    /// No access token, and guests are not admitted (4030).
    AuthRequired,
    /// The access token expired (4031).
    AuthExpired,
    /// The access token is not valid yet (4032).
    AuthNotYetValid,
    /// The access token's signature does not verify (4033).
    AuthBadSignature,
    /// The access token is of another issuer (4034).
    AuthWrongIssuer,
    /// The access token is for another audience (4035).
    AuthWrongAudience,
    /// The access token is not a well-formed JWT with a subject (4036).
    AuthMalformed,
    /// An operator removed the player (4040); the Error before the close
    /// carries the operator's reason.
    Kicked,
    /// The server failed while handling this socket's bytes (1011): a bug,
    /// caught so that it closes this socket only.
    Internal,
}

impl CloseReason {
    /// Every reason (the metrics export each one's series from the start).
    pub const ALL: [CloseReason; 35] = [
        CloseReason::Kicked,
        CloseReason::Internal,
        CloseReason::AuthRequired,
        CloseReason::AuthExpired,
        CloseReason::AuthNotYetValid,
        CloseReason::AuthBadSignature,
        CloseReason::AuthWrongIssuer,
        CloseReason::AuthWrongAudience,
        CloseReason::AuthMalformed,
        CloseReason::ProtocolError,
        CloseReason::InvalidUtf8,
        CloseReason::ControlFlood,
        CloseReason::SessionReplaced,
        CloseReason::TicketInvalid,
        CloseReason::TicketUsed,
        CloseReason::TicketExpired,
        CloseReason::TicketLive,
        CloseReason::Moved,
        CloseReason::ClientClosed,
        CloseReason::Shutdown,
        CloseReason::Restart,
        CloseReason::Malformed,
        CloseReason::Unknown,
        CloseReason::TooBig,
        CloseReason::HelloExpected,
        CloseReason::HelloTimeout,
        CloseReason::ProtocolVersion,
        CloseReason::NameInvalid,
        CloseReason::ChatTooLong,
        CloseReason::InputFlood,
        CloseReason::ChatFlood,
        CloseReason::TooSlow,
        CloseReason::PeerTimeout,
        CloseReason::Busy,
        CloseReason::TextFrame,
    ];

    /// The close code sent in the close frame.
    pub fn code(self) -> CloseCode {
        match self {
            CloseReason::ClientClosed => CloseCode::Normal,
            CloseReason::Shutdown => CloseCode::GoingAway,
            CloseReason::Restart => CloseCode::ServiceRestart,
            CloseReason::Malformed => CloseCode::MalformedMessage,
            CloseReason::Unknown => CloseCode::UnknownMessage,
            CloseReason::TooBig => CloseCode::MessageTooBig,
            CloseReason::HelloExpected => CloseCode::HelloExpected,
            CloseReason::HelloTimeout => CloseCode::HelloTimeout,
            CloseReason::ProtocolVersion => CloseCode::ProtocolVersion,
            CloseReason::NameInvalid => CloseCode::NameInvalid,
            CloseReason::ChatTooLong => CloseCode::ChatTooLong,
            CloseReason::InputFlood => CloseCode::InputFlood,
            CloseReason::ChatFlood => CloseCode::ChatFlood,
            CloseReason::TooSlow => CloseCode::TooSlow,
            CloseReason::PeerTimeout => CloseCode::PeerTimeout,
            CloseReason::Busy => CloseCode::ServerBusy,
            CloseReason::TextFrame => CloseCode::TextFrame,
            CloseReason::SessionReplaced => CloseCode::SessionReplaced,
            CloseReason::TicketInvalid => CloseCode::TicketInvalid,
            CloseReason::TicketUsed => CloseCode::TicketUsed,
            CloseReason::TicketExpired => CloseCode::TicketExpired,
            CloseReason::TicketLive => CloseCode::TicketLive,
            CloseReason::Moved => CloseCode::Moved,
            CloseReason::ProtocolError => CloseCode::ProtocolError,
            CloseReason::InvalidUtf8 => CloseCode::InvalidPayload,
            CloseReason::ControlFlood => CloseCode::ControlFlood,
            CloseReason::AuthRequired => CloseCode::AuthRequired,
            CloseReason::AuthExpired => CloseCode::AuthExpired,
            CloseReason::AuthNotYetValid => CloseCode::AuthNotYetValid,
            CloseReason::AuthBadSignature => CloseCode::AuthBadSignature,
            CloseReason::AuthWrongIssuer => CloseCode::AuthWrongIssuer,
            CloseReason::AuthWrongAudience => CloseCode::AuthWrongAudience,
            CloseReason::AuthMalformed => CloseCode::AuthMalformed,
            CloseReason::Kicked => CloseCode::Kicked,
            CloseReason::Internal => CloseCode::InternalError,
        }
    }

    /// The `reason` label of `mino_sockets_closed_total`.
    pub fn label(self) -> &'static str {
        match self {
            CloseReason::ClientClosed => "client_closed",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Restart => "restart",
            CloseReason::Malformed => "malformed",
            CloseReason::Unknown => "unknown_message",
            CloseReason::TooBig => "too_big",
            CloseReason::HelloExpected => "hello_expected",
            CloseReason::HelloTimeout => "hello_timeout",
            CloseReason::ProtocolVersion => "protocol_version",
            CloseReason::NameInvalid => "name_invalid",
            CloseReason::ChatTooLong => "chat_too_long",
            CloseReason::InputFlood => "input_flood",
            CloseReason::ChatFlood => "chat_flood",
            CloseReason::TooSlow => "too_slow",
            CloseReason::PeerTimeout => "peer_timeout",
            CloseReason::Busy => "busy",
            CloseReason::TextFrame => "text_frame",
            CloseReason::SessionReplaced => "session_replaced",
            CloseReason::TicketInvalid => "ticket_invalid",
            CloseReason::TicketUsed => "ticket_used",
            CloseReason::TicketExpired => "ticket_expired",
            CloseReason::TicketLive => "ticket_live",
            CloseReason::Moved => "moved",
            CloseReason::ProtocolError => "protocol_error",
            CloseReason::InvalidUtf8 => "invalid_utf8",
            CloseReason::ControlFlood => "control_flood",
            CloseReason::AuthRequired => "auth_required",
            CloseReason::AuthExpired => "auth_expired",
            CloseReason::AuthNotYetValid => "auth_not_yet_valid",
            CloseReason::AuthBadSignature => "auth_bad_signature",
            CloseReason::AuthWrongIssuer => "auth_wrong_issuer",
            CloseReason::AuthWrongAudience => "auth_wrong_audience",
            CloseReason::AuthMalformed => "auth_malformed",
            CloseReason::Kicked => "kicked",
            CloseReason::Internal => "internal",
        }
    }

    /// A short human text for the close frame and the Error message.
    pub fn message(self) -> &'static str {
        match self {
            CloseReason::ClientClosed => "bye",
            CloseReason::Shutdown => "server shutting down",
            CloseReason::Restart => "server restarting",
            CloseReason::Malformed => "malformed message",
            CloseReason::Unknown => "unknown message type",
            CloseReason::TooBig => "message too big",
            CloseReason::HelloExpected => "first message must be hello",
            CloseReason::HelloTimeout => "no hello in time",
            CloseReason::ProtocolVersion => "unsupported protocol version",
            CloseReason::NameInvalid => "invalid name",
            CloseReason::ChatTooLong => "chat line empty or too long",
            CloseReason::InputFlood => "too many inputs",
            CloseReason::ChatFlood => "too many chat lines",
            CloseReason::TooSlow => "connection too slow",
            CloseReason::PeerTimeout => "peer silent too long",
            CloseReason::Busy => "server busy",
            CloseReason::TextFrame => "binary frames only",
            CloseReason::SessionReplaced => "session replaced by a newer connection",
            CloseReason::TicketInvalid => "invalid resume ticket",
            CloseReason::TicketUsed => "resume ticket already used",
            CloseReason::TicketExpired => "resume ticket expired",
            CloseReason::TicketLive => "session busy elsewhere, retry",
            CloseReason::Moved => "moved: resume on another shard",
            CloseReason::ProtocolError => "websocket protocol error",
            CloseReason::InvalidUtf8 => "text not utf-8",
            CloseReason::ControlFlood => "too many pings",
            CloseReason::AuthRequired => "sign in required",
            CloseReason::AuthExpired => "sign-in expired",
            CloseReason::AuthNotYetValid => "sign-in not valid yet",
            CloseReason::AuthBadSignature => "sign-in not recognised",
            CloseReason::AuthWrongIssuer => "sign-in from another service",
            CloseReason::AuthWrongAudience => "sign-in for another game",
            CloseReason::AuthMalformed => "sign-in token malformed",
            CloseReason::Kicked => "removed by an operator",
            CloseReason::Internal => "internal server error",
        }
    }

    /// True when the server should tell the peer why with an Error message
    /// before the close frame (not for a peer that left or a dead peer, nor
    /// for a peer whose websocket is broken: the close frame says it).
    pub fn tells_peer(self) -> bool {
        !matches!(
            self,
            CloseReason::ClientClosed
                | CloseReason::PeerTimeout
                | CloseReason::Busy
                | CloseReason::Moved
                | CloseReason::ProtocolError
                | CloseReason::InvalidUtf8
        )
    }

    /// The answer to a peer's close frame carrying `code` (`None`: a close
    /// frame without a payload): a normal close for a code a peer may send
    /// (RFC 6455 section 7.4: 1000-1003, 1007-1014, 3000-4999), a protocol
    /// error for one that must never be sent (1005, 1006, 1015) or that is
    /// undefined (below 1000, 1004, 1016-2999, 5000 and up).
    ///
    /// tungstenite hands a close frame with such a code over as 1002 (its
    /// own "Protocol violation"), so a peer's 1002 is answered with 1002 too:
    /// the echo RFC 6455 section 5.5.1 suggests. tungstenite does the same to
    /// 1014 (registered after RFC 6455), which therefore closes as a protocol
    /// error too.
    pub fn answering(code: Option<u16>) -> CloseReason {
        match code {
            None => CloseReason::ClientClosed,
            Some(1002) => CloseReason::ProtocolError,
            Some(code) if sendable(code) => CloseReason::ClientClosed,
            Some(_) => CloseReason::ProtocolError,
        }
    }
}

/// True for a close code an endpoint may put in a close frame (RFC 6455
/// section 7.4 and the IANA registry): 1000-1003, 1007-1014 (1004 is
/// reserved; 1005, 1006 and 1015 must never be sent), 3000-3999 (registered
/// by libraries and frameworks) and 4000-4999 (private use).
pub fn sendable(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

impl From<&DecodeError> for CloseReason {
    fn from(e: &DecodeError) -> Self {
        match e {
            DecodeError::TooLarge(_) => CloseReason::TooBig,
            DecodeError::Malformed(_) | DecodeError::InvalidField(_) => CloseReason::Malformed,
            DecodeError::Unknown(_) => CloseReason::Unknown,
            DecodeError::NameInvalid => CloseReason::NameInvalid,
            DecodeError::ChatTooLong => CloseReason::ChatTooLong,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_labels_are_one_to_one() {
        let codes: std::collections::HashSet<_> = CloseReason::ALL.iter().map(|r| r.code().0).collect();
        let labels: std::collections::HashSet<_> = CloseReason::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(codes.len(), CloseReason::ALL.len());
        assert_eq!(labels.len(), CloseReason::ALL.len());
    }

    #[test]
    fn codes_a_peer_may_send_close_normally_and_the_rest_are_protocol_errors() {
        assert_eq!(CloseReason::answering(None), CloseReason::ClientClosed);
        for code in [1000, 1001, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] {
            assert_eq!(CloseReason::answering(Some(code)), CloseReason::ClientClosed, "{code}");
        }
        for code in [0, 1, 999, 1002, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            assert_eq!(CloseReason::answering(Some(code)), CloseReason::ProtocolError, "{code}");
        }
        assert_eq!(CloseReason::ProtocolError.code().0, 1002);
        assert_eq!(CloseReason::InvalidUtf8.code().0, 1007);
    }

    #[test]
    fn every_code_the_server_sends_may_be_sent() {
        for reason in CloseReason::ALL {
            assert!(sendable(reason.code().0), "{reason:?}");
        }
    }

    #[test]
    fn decode_errors_map_to_their_codes() {
        for e in [DecodeError::TooLarge(1), DecodeError::Unknown(9), DecodeError::NameInvalid, DecodeError::ChatTooLong]
        {
            assert_eq!(CloseReason::from(&e).code(), e.close_code());
        }
    }
}
