//! Client-to-server messages: the verified decoder the server runs on every
//! websocket message, and the encoders bots (and tests) use to speak like the
//! browser client.

use crate::limits::{self, MAX_ACCESS_TOKEN_BYTES, MAX_CHAT_CHARS, MAX_NAME_CHARS, MAX_TICKET_BYTES};
use crate::wire::{self, CloseCode};
use flatbuffers::FlatBufferBuilder;

/// A unit direction the player wants to walk in, or standing still.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Direction {
    x: f32,
    y: f32,
}

impl Direction {
    /// Standing still.
    pub const STILL: Direction = Direction { x: 0.0, y: 0.0 };

    /// Normalizes `(x, y)`; a vector shorter than 1e-3 means standing still.
    /// Returns `None` for non-finite input.
    pub fn new(x: f32, y: f32) -> Option<Direction> {
        if !x.is_finite() || !y.is_finite() {
            return None;
        }
        // In f64, so large finite components (3e38, 3e38) do not overflow.
        let (x, y) = (f64::from(x), f64::from(y));
        let len = x.hypot(y);
        if len < 1e-3 {
            return Some(Direction::STILL);
        }
        Some(Direction { x: (x / len) as f32, y: (y / len) as f32 })
    }

    /// Unit x component (0 when still).
    pub fn x(self) -> f32 {
        self.x
    }

    /// Unit y component (0 when still).
    pub fn y(self) -> f32 {
        self.y
    }

    /// True when the player stands still.
    pub fn is_still(self) -> bool {
        self.x == 0.0 && self.y == 0.0
    }
}

/// What a client takes: bits of the schema's `Capability` (a Hello's ask,
/// a Welcome's grant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(pub u32);

impl Capabilities {
    /// Nothing beyond protocol 4's basics: full forms only.
    pub const NONE: Capabilities = Capabilities(0);
    /// View frames may carry deltas.
    pub const DELTAS: Capabilities = Capabilities(wire::Capability::Deltas.0);
    /// With [`Capabilities::DELTAS`]: view frames sent as datagrams
    /// (WebTransport) may carry deltas, applied by the lossy rule
    /// ([`crate::held::Delivery::Lossy`]); the client sends Resync when it
    /// cannot apply one.
    pub const DATAGRAM_DELTAS: Capabilities = Capabilities(wire::Capability::DatagramDeltas.0);
    /// Every capability this build knows.
    pub const KNOWN: Capabilities = Capabilities(wire::Capability::Deltas.0 | wire::Capability::DatagramDeltas.0);

    /// True when every bit of `other` is set here.
    pub fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits of these that this build knows (what a server grants).
    pub fn known(self) -> Capabilities {
        Capabilities(self.0 & Self::KNOWN.0)
    }

    /// The bits this build does not know.
    pub fn unknown(self) -> u32 {
        self.0 & !Self::KNOWN.0
    }
}

/// A decoded, validated Hello. Its `Debug` shows neither the access token
/// nor the ticket (both secrets), only whether they are there.
#[derive(Clone, PartialEq)]
pub struct Hello {
    /// The client's protocol version (checked by the server against [`crate::PROTOCOL_VERSION`]).
    pub protocol_version: u16,
    /// Display name, trimmed, 1 to [`MAX_NAME_CHARS`] characters, as [`validate_name`] allows.
    pub name: String,
    /// An identity service's access token (a JWT), at most
    /// [`MAX_ACCESS_TOKEN_BYTES`]; guests omit it.
    pub access_token: Option<String>,
    /// Resume ticket bytes, at most [`MAX_TICKET_BYTES`].
    pub resume_ticket: Option<Vec<u8>>,
    /// What the client takes (unknown bits kept, for the server to log).
    pub capabilities: Capabilities,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("protocol_version", &self.protocol_version)
            .field("name", &self.name)
            .field("access_token", &self.access_token.as_ref().map(|_| "<redacted>"))
            .field("resume_ticket", &self.resume_ticket.as_ref().map(|_| "<redacted>"))
            .field("capabilities", &self.capabilities)
            .finish()
    }
}

/// One client message as a domain value.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientMsg {
    /// First message of a socket.
    Hello(Hello),
    /// The direction the player wants to walk in.
    Input {
        /// Client-side sequence number.
        seq: u32,
        /// Normalized direction.
        dir: Direction,
    },
    /// A chat line, 1 to [`MAX_CHAT_CHARS`] characters.
    Chat(String),
    /// Round-trip probe.
    Ping {
        /// Echoed in the Pong.
        client_time_ms: f64,
    },
    /// Which players are these? At most [`MAX_NAMES_REQUEST_IDS`] ids.
    Names(Vec<u32>),
    /// Every cell of the view whole again: a client granted
    /// [`Capabilities::DATAGRAM_DELTAS`] missed a change (a lost datagram).
    Resync,
}

/// Most ids one NamesRequest may carry.
pub const MAX_NAMES_REQUEST_IDS: usize = crate::wire::Limit::MaxNamesRequestIds.0 as usize;

/// Why a client message was refused. Each maps to one close code.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DecodeError {
    /// Longer than [`limits::MAX_CLIENT_MESSAGE_BYTES`].
    #[error("message of {0} bytes is over the limit")]
    TooLarge(usize),
    /// Not a valid ClientMessage FlatBuffer (fails the verifier).
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A union member this server does not know, or none.
    #[error("unknown message type {0}")]
    Unknown(u8),
    /// A field with a value outside its domain (non-finite direction, oversized token or ticket).
    #[error("invalid field {0}")]
    InvalidField(&'static str),
    /// Name empty, too long or with control characters.
    #[error("invalid name")]
    NameInvalid,
    /// Chat line empty or over [`MAX_CHAT_CHARS`].
    #[error("chat line too long or empty")]
    ChatTooLong,
}

impl DecodeError {
    /// The close code the server sends for this error.
    pub fn close_code(&self) -> CloseCode {
        match self {
            DecodeError::TooLarge(_) => CloseCode::MessageTooBig,
            DecodeError::Malformed(_) | DecodeError::InvalidField(_) => CloseCode::MalformedMessage,
            DecodeError::Unknown(_) => CloseCode::UnknownMessage,
            DecodeError::NameInvalid => CloseCode::NameInvalid,
            DecodeError::ChatTooLong => CloseCode::ChatTooLong,
        }
    }
}

/// Verifies and decodes one client message.
///
/// Errors: see [`DecodeError`]; never panics, whatever the bytes.
pub fn decode(buf: &[u8]) -> Result<ClientMsg, DecodeError> {
    if buf.len() > limits::MAX_CLIENT_MESSAGE_BYTES {
        return Err(DecodeError::TooLarge(buf.len()));
    }
    let msg = wire::root_as_client_message_with_opts(&limits::client_verifier(), buf)
        .map_err(|e| DecodeError::Malformed(e.to_string()))?;
    let kind = msg.body_type();
    match kind {
        wire::ClientBody::Hello => msg.body_as_hello().map(decode_hello),
        wire::ClientBody::Input => msg.body_as_input().map(decode_input),
        wire::ClientBody::ChatSend => msg.body_as_chat_send().map(decode_chat),
        wire::ClientBody::Ping => {
            msg.body_as_ping().map(|p| Ok(ClientMsg::Ping { client_time_ms: p.client_time_ms() }))
        }
        wire::ClientBody::NamesRequest => msg.body_as_names_request().map(decode_names),
        wire::ClientBody::Resync => msg.body_as_resync().map(|_| Ok(ClientMsg::Resync)),
        _ => None,
    }
    .unwrap_or(Err(DecodeError::Unknown(kind.0)))
}

fn decode_hello(h: wire::Hello<'_>) -> Result<ClientMsg, DecodeError> {
    let name = validate_name(h.name().unwrap_or(""))?;
    let access_token = match h.access_token() {
        Some(t) if t.len() > MAX_ACCESS_TOKEN_BYTES => return Err(DecodeError::InvalidField("access_token")),
        Some(t) if !t.is_empty() => Some(t.to_owned()),
        _ => None,
    };
    let resume_ticket = match h.resume_ticket() {
        Some(t) if t.len() > MAX_TICKET_BYTES => return Err(DecodeError::InvalidField("resume_ticket")),
        Some(t) if !t.is_empty() => Some(t.bytes().to_vec()),
        _ => None,
    };
    let capabilities = Capabilities(h.capabilities());
    Ok(ClientMsg::Hello(Hello {
        protocol_version: h.protocol_version(),
        name,
        access_token,
        resume_ticket,
        capabilities,
    }))
}

fn decode_input(i: wire::Input<'_>) -> Result<ClientMsg, DecodeError> {
    let dir = Direction::new(i.dir_x(), i.dir_y()).ok_or(DecodeError::InvalidField("direction"))?;
    Ok(ClientMsg::Input { seq: i.seq(), dir })
}

fn decode_names(n: wire::NamesRequest<'_>) -> Result<ClientMsg, DecodeError> {
    let ids = n.ids().map(|ids| ids.iter().collect::<Vec<u32>>()).unwrap_or_default();
    if ids.len() > MAX_NAMES_REQUEST_IDS {
        return Err(DecodeError::InvalidField("ids"));
    }
    Ok(ClientMsg::Names(ids))
}

fn decode_chat(c: wire::ChatSend<'_>) -> Result<ClientMsg, DecodeError> {
    chat_line(c.text().unwrap_or("")).map(ClientMsg::Chat).ok_or(DecodeError::ChatTooLong)
}

/// Most combining marks kept on one character in a chat line (a run of
/// hundreds stacks above and below the lines around it).
pub const MAX_COMBINING_RUN: usize = 4;

/// A chat line as it is relayed, or `None` when it is not one: trimmed, 1 to
/// [`MAX_CHAT_CHARS`] characters; control characters made spaces, the
/// bidirectional embeddings, overrides and isolates dropped (they would
/// reorder what follows the line where it is drawn), runs of marks (general
/// category M) cut to [`MAX_COMBINING_RUN`]; and something visible left (not only white
/// space and invisible characters, as a name must have). The browser's
/// `chatLine` (`client-web/src/net/protocol.ts`) is the same rule.
pub fn chat_line(raw: &str) -> Option<String> {
    let text = raw.trim();
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_CHAT_CHARS {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut run = 0;
    for c in text.chars() {
        if is_bidi_embedding(c) {
            continue;
        }
        run = if is_combining_mark(c) { run + 1 } else { 0 };
        if run > MAX_COMBINING_RUN {
            continue;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    let line = out.trim();
    line.chars().any(is_visible).then(|| line.to_owned())
}

/// The explicit embeddings, overrides and isolates of UAX #9 (LRE, RLE,
/// PDF, LRO, RLO, LRI, RLI, FSI, PDI): the bidirectional formatting
/// characters whose effect runs on past themselves.
fn is_bidi_embedding(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A mark (Unicode's general category M: nonspacing, spacing and
/// enclosing marks), what "zalgo" text stacks, in any script.
fn is_combining_mark(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c)
}

/// Trims `raw` and checks it is a valid display name.
///
/// Errors: [`DecodeError::NameInvalid`] when empty, over [`MAX_NAME_CHARS`],
/// with control characters or bidirectional formatting characters (which
/// would reorder the text drawn after the name: a roster's " (you)", a chat
/// line), or with nothing visible (only white space and invisible
/// characters). The browser's `validName` (`client-web/src/net/protocol.ts`)
/// is the same rule.
pub fn validate_name(raw: &str) -> Result<String, DecodeError> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0
        || chars > MAX_NAME_CHARS
        || name.chars().any(|c| c.is_control() || is_bidi_format(c))
        || !name.chars().any(is_visible)
    {
        return Err(DecodeError::NameInvalid);
    }
    Ok(name.to_owned())
}

/// True for a character drawn as something: not white space, not
/// Default_Ignorable, not the braille blank (a name and a chat line must have
/// one; the page's `visible` is the same rule).
fn is_visible(c: char) -> bool {
    !(c.is_whitespace() || is_default_ignorable(c) || c == BRAILLE_BLANK)
}

/// U+2800 BRAILLE PATTERN BLANK: not Default_Ignorable, but drawn as
/// nothing in every font (a name of it alone looks empty).
const BRAILLE_BLANK: char = '\u{2800}';

/// The explicit bidirectional formatting characters and marks (Unicode
/// UAX #9, sections 2.1-2.6: ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI,
/// RLI, FSI, PDI).
fn is_bidi_format(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode
/// 16): characters drawn as nothing (zero-width spaces and joiners, fillers,
/// variation selectors, tags).
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

fn finish(
    mut fbb: FlatBufferBuilder<'_>,
    kind: wire::ClientBody,
    body: flatbuffers::WIPOffset<flatbuffers::UnionWIPOffset>,
) -> Vec<u8> {
    let root = wire::ClientMessage::create(&mut fbb, &wire::ClientMessageArgs { body_type: kind, body: Some(body) });
    fbb.finish(root, None);
    fbb.finished_data().to_vec()
}

/// Encodes a Hello taking deltas, as the browser does. `resume_ticket` and
/// `access_token` are omitted when `None`.
pub fn encode_hello(name: &str, access_token: Option<&str>, resume_ticket: Option<&[u8]>) -> Vec<u8> {
    encode_hello_version(crate::PROTOCOL_VERSION, name, access_token, resume_ticket)
}

/// Encodes a Hello with an explicit protocol version (tests of version refusal).
pub fn encode_hello_version(
    version: u16,
    name: &str,
    access_token: Option<&str>,
    resume_ticket: Option<&[u8]>,
) -> Vec<u8> {
    encode_hello_with(version, name, access_token, resume_ticket, Capabilities::DELTAS)
}

/// Encodes a Hello asking for `capabilities`.
pub fn encode_hello_with(
    version: u16,
    name: &str,
    access_token: Option<&str>,
    resume_ticket: Option<&[u8]>,
    capabilities: Capabilities,
) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(128);
    let name = fbb.create_string(name);
    let access_token = access_token.map(|t| fbb.create_string(t));
    let resume_ticket = resume_ticket.map(|t| fbb.create_vector(t));
    let hello = wire::Hello::create(
        &mut fbb,
        &wire::HelloArgs {
            protocol_version: version,
            name: Some(name),
            access_token,
            resume_ticket,
            capabilities: capabilities.0,
        },
    );
    finish(fbb, wire::ClientBody::Hello, hello.as_union_value())
}

/// Encodes an Input with a raw (not yet normalized) direction.
pub fn encode_input(seq: u32, dir_x: f32, dir_y: f32) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(64);
    let input = wire::Input::create(&mut fbb, &wire::InputArgs { seq, dir_x, dir_y });
    finish(fbb, wire::ClientBody::Input, input.as_union_value())
}

/// Encodes a chat line.
pub fn encode_chat(text: &str) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(64 + text.len());
    let text = fbb.create_string(text);
    let chat = wire::ChatSend::create(&mut fbb, &wire::ChatSendArgs { text: Some(text) });
    finish(fbb, wire::ClientBody::ChatSend, chat.as_union_value())
}

/// Encodes a Ping carrying the client's clock in ms.
pub fn encode_ping(client_time_ms: f64) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(64);
    let ping = wire::Ping::create(&mut fbb, &wire::PingArgs { client_time_ms });
    finish(fbb, wire::ClientBody::Ping, ping.as_union_value())
}

/// Encodes a NamesRequest for `ids`.
pub fn encode_names_request(ids: &[u32]) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(32 + 4 * ids.len());
    let ids = fbb.create_vector(ids);
    let request = wire::NamesRequest::create(&mut fbb, &wire::NamesRequestArgs { ids: Some(ids) });
    finish(fbb, wire::ClientBody::NamesRequest, request.as_union_value())
}

/// Encodes a Resync (every cell of the view whole again).
pub fn encode_resync() -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::with_capacity(32);
    let resync = wire::Resync::create(&mut fbb, &wire::ResyncArgs {});
    finish(fbb, wire::ClientBody::Resync, resync.as_union_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chat line and what is relayed of it (`None`: refused). The same as
    /// `client-web/src/net/protocol.test.ts`'s.
    const CHAT_CASES: &[(&str, Option<&str>)] = &[
        ("  hi  ", Some("hi")),
        ("a\tb", Some("a b")),
        ("\u{202E}evil\u{202C} text", Some("evil text")),
        ("\u{2067}x\u{2069}", Some("x")),
        ("\u{200F}shalom", Some("\u{200F}shalom")),
        ("\u{200B}\u{200B}", None),
        ("\u{2800}", None),
        ("\u{202E}", None),
        ("   ", None),
        ("e\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}!", Some("e\u{301}\u{302}\u{303}\u{304}!")),
        ("caf\u{e9}", Some("caf\u{e9}")),
        // Marks of other scripts stack too: Cyrillic's enclosing, Hebrew's,
        // Thai's.
        ("\u{430}\u{488}\u{488}\u{488}\u{488}\u{488}\u{489}", Some("\u{430}\u{488}\u{488}\u{488}\u{488}")),
        ("\u{5d0}\u{591}\u{592}\u{593}\u{594}\u{595}\u{596}", Some("\u{5d0}\u{591}\u{592}\u{593}\u{594}")),
        ("\u{e01}\u{e34}\u{e35}\u{e36}\u{e37}\u{e38}", Some("\u{e01}\u{e34}\u{e35}\u{e36}\u{e37}")),
    ];

    #[test]
    fn names_requests_round_trip_and_too_many_ids_are_refused() {
        assert_eq!(decode(&encode_names_request(&[3, 9])), Ok(ClientMsg::Names(vec![3, 9])));
        assert_eq!(decode(&encode_resync()), Ok(ClientMsg::Resync));
        let many: Vec<u32> = (0..=MAX_NAMES_REQUEST_IDS as u32).collect();
        assert_eq!(decode(&encode_names_request(&many)), Err(DecodeError::InvalidField("ids")));
    }

    #[test]
    fn hello_round_trips() {
        let bytes = encode_hello("  Ada ", Some("tok"), Some(&[1, 2, 3]));
        let ClientMsg::Hello(h) = decode(&bytes).expect("valid hello") else { panic!("not a hello") };
        assert_eq!(h.name, "Ada");
        assert_eq!(h.access_token.as_deref(), Some("tok"));
        assert_eq!(h.resume_ticket.as_deref(), Some(&[1u8, 2, 3][..]));
        assert_eq!(h.protocol_version, crate::PROTOCOL_VERSION);
    }

    #[test]
    fn input_is_normalized_and_zero_means_still() {
        let ClientMsg::Input { seq, dir } = decode(&encode_input(7, 3.0, 4.0)).expect("input") else { panic!() };
        assert_eq!(seq, 7);
        assert!((dir.x() - 0.6).abs() < 1e-6 && (dir.y() - 0.8).abs() < 1e-6);
        let ClientMsg::Input { dir, .. } = decode(&encode_input(8, 0.0, 0.0)).expect("input") else { panic!() };
        assert!(dir.is_still());
    }

    #[test]
    fn huge_finite_direction_is_still_a_direction() {
        let d = Direction::new(3e38, 3e38).expect("finite");
        assert!((d.x() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((d.y() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn non_finite_direction_is_malformed() {
        let err = decode(&encode_input(1, f32::NAN, 0.0)).expect_err("nan");
        assert_eq!(err.close_code(), CloseCode::MalformedMessage);
        let err = decode(&encode_input(1, f32::INFINITY, 1.0)).expect_err("inf");
        assert_eq!(err.close_code(), CloseCode::MalformedMessage);
    }

    #[test]
    fn garbage_and_truncation_are_malformed_not_panics() {
        assert!(matches!(decode(&[]), Err(DecodeError::Malformed(_))));
        assert!(matches!(decode(&[0xff; 40]), Err(DecodeError::Malformed(_))));
        let hello = encode_hello("Ada", None, None);
        for cut in 0..hello.len() {
            let _ = decode(&hello[..cut]);
        }
    }

    #[test]
    fn oversized_is_refused_before_verifying() {
        let big = vec![0u8; limits::MAX_CLIENT_MESSAGE_BYTES + 1];
        assert_eq!(decode(&big), Err(DecodeError::TooLarge(big.len())));
    }

    #[test]
    fn names_and_chat_are_bounded() {
        assert!(validate_name("").is_err());
        assert!(validate_name("   ").is_err());
        assert!(validate_name(&"x".repeat(MAX_NAME_CHARS + 1)).is_err());
        assert!(validate_name("a\u{7}b").is_err());
        // The same cases as the browser's validName (client-web/src/net/protocol.test.ts).
        for bad in [
            "\u{202E}evil",
            "a\u{2066}b",
            "\u{200F}x",
            "\u{200B}",
            " \u{200B}\u{2060} ",
            "\u{3164}",
            "\u{FE0F}\u{00AD}",
            "\u{2800}\u{2800}",
            &format!("\u{FEFF}{}", "x".repeat(MAX_NAME_CHARS)),
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        // Trimmed of White_Space: U+0085 goes, U+FEFF stays.
        assert_eq!(validate_name("\u{85}bob\u{85}").as_deref(), Ok("bob"));
        assert_eq!(validate_name("bob\u{FEFF}").as_deref(), Ok("bob\u{FEFF}"));
        for good in ["Zoë 🎮", "👨\u{200D}👩\u{200D}👧", "שלום", "❤\u{FE0F}", "a\u{200B}b"] {
            assert_eq!(validate_name(good).as_deref(), Ok(good), "{good:?}");
        }
        assert_eq!(validate_name(&"é".repeat(MAX_NAME_CHARS)).map(|n| n.chars().count()), Ok(MAX_NAME_CHARS));
        assert_eq!(decode(&encode_chat(&"y".repeat(MAX_CHAT_CHARS + 1))), Err(DecodeError::ChatTooLong));
        assert_eq!(decode(&encode_chat("hi")), Ok(ClientMsg::Chat("hi".into())));
        // The chat line's rule (the browser's test has the same cases).
        for (raw, line) in CHAT_CASES {
            assert_eq!(chat_line(raw).as_deref(), *line, "{raw:?}");
        }
    }

    #[test]
    fn unknown_union_member_is_unknown() {
        // A ClientMessage whose body type is 42, with a table behind it.
        let mut fbb = FlatBufferBuilder::new();
        let ping = wire::Ping::create(&mut fbb, &wire::PingArgs { client_time_ms: 1.0 });
        let root = wire::ClientMessage::create(
            &mut fbb,
            &wire::ClientMessageArgs { body_type: wire::ClientBody(42), body: Some(ping.as_union_value()) },
        );
        fbb.finish(root, None);
        assert_eq!(decode(fbb.finished_data()), Err(DecodeError::Unknown(42)));
    }
}
