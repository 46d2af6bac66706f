//! Identity against the real binary: a Hello's access token (a JWT minted
//! here) is verified (signature, expiry, not-before, issuer, audience, the
//! algorithm pinned by the key); each refusal closes with its own code; the
//! account plays under its name; one account is one player across the place
//! (a second sign-in, on any shard, takes the first over); a resume ticket
//! cannot become another account; keys rotate without a restart; the token
//! never reaches the log.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{wait, Frame, Player, Redis, Shard, ShardBuilder, Signal, WorkDir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

const SECRET: &[u8] = b"a test secret of at least 32 bytes, for HS256";
const ISSUER: &str = "https://id.example";
const AUDIENCE: &str = "mino";

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

fn claims(sub: &str, exp_in: i64) -> serde_json::Value {
    serde_json::json!({"sub": sub, "name": "Ada", "iss": ISSUER, "aud": AUDIENCE, "exp": now() + exp_in})
}

fn hs256(claims: &serde_json::Value) -> String {
    encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(SECRET)).expect("token")
}

/// A folder holding the HS256 secret file.
fn secret_dir() -> (WorkDir, PathBuf) {
    let dir = WorkDir::new("identity");
    let path = dir.path().join("secret");
    std::fs::write(&path, [SECRET, b"\n"].concat()).expect("write the secret");
    (dir, path)
}

/// A shard verifying HS256 tokens with the secret at `path`, guests
/// refused, to start.
fn hs_shard(path: &Path) -> ShardBuilder {
    let keys = Shard::build(SERVER).flag("auth-hs256-secret-file", path.display());
    let claims = keys.flag("auth-issuer", ISSUER).flag("auth-audience", AUDIENCE);
    claims.flag("guests", "deny").flag("auth-leeway-s", 5)
}

/// Says Hello with `token` (and `ticket`): the welcome, or the close code
/// and the Error code that came before it.
async fn hello(
    server: &Shard,
    token: Option<&str>,
    ticket: Option<&[u8]>,
) -> Result<Player, (Option<u16>, Option<u16>)> {
    let mut p = Player::connect(server).await;
    p.send(client::encode_hello("guest-name", token, ticket)).await;
    loop {
        match p.next().await {
            Frame::Welcome(w) => {
                p.welcome = Some(w);
                return Ok(p);
            }
            Frame::Error(code, _) => {
                let (close, _) = p.closed().await;
                return Err((close, Some(code)));
            }
            Frame::Closed(code) => return Err((code, None)),
            _ => {}
        }
    }
}

fn refused_with(result: Result<Player, (Option<u16>, Option<u16>)>, code: CloseCode) {
    match result {
        Ok(_) => panic!("admitted; expected {code:?}"),
        Err(codes) => assert_eq!(codes, (Some(code.0), Some(code.0)), "expected {code:?}"),
    }
}

#[tokio::test]
async fn every_kind_of_bad_token_is_refused_with_its_own_code() {
    let (_dir, secret) = secret_dir();
    let server = hs_shard(&secret).start();
    refused_with(hello(&server, None, None).await, CloseCode::AuthRequired);
    refused_with(hello(&server, Some(&hs256(&claims("a", -60))), None).await, CloseCode::AuthExpired);
    let mut early = claims("a", 60);
    early["nbf"] = (now() + 60).into();
    refused_with(hello(&server, Some(&hs256(&early)), None).await, CloseCode::AuthNotYetValid);
    let forged =
        encode(&Header::default(), &claims("a", 60), &EncodingKey::from_secret(b"another secret, 32 bytes or more"))
            .expect("token");
    refused_with(hello(&server, Some(&forged), None).await, CloseCode::AuthBadSignature);
    let mut other = claims("a", 60);
    other["iss"] = "https://other.example".into();
    refused_with(hello(&server, Some(&hs256(&other)), None).await, CloseCode::AuthWrongIssuer);
    let mut other = claims("a", 60);
    other["aud"] = "another-game".into();
    refused_with(hello(&server, Some(&hs256(&other)), None).await, CloseCode::AuthWrongAudience);
    refused_with(hello(&server, Some("not-a-token"), None).await, CloseCode::AuthMalformed);
    use base64::Engine;
    let b64 = |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let unsigned = format!("{}.{}.", b64(serde_json::json!({"alg": "none", "typ": "JWT"})), b64(claims("a", 60)));
    let none = hello(&server, Some(&unsigned), None).await;
    assert!(none.is_err(), "alg none is refused");
    let metrics = server.metrics().await;
    for reason in
        ["missing", "expired", "not_yet_valid", "bad_signature", "wrong_issuer", "wrong_audience", "malformed"]
    {
        assert!(metrics.value_or_zero(&format!("mino_auth_refusals_total{{reason=\"{reason}\"}}")) >= 1.0, "{reason}");
    }
    // A valid token plays, under the token's name.
    let p = hello(&server, Some(&hs256(&claims("acct-1", 60))), None).await.expect("admitted");
    assert!(!p.welcome.as_ref().is_some_and(|w| w.resumed));
}

/// Signs claims into a token.
type Signer<'a> = dyn Fn(&serde_json::Value) -> String + 'a;

/// Every claim the operator configured is required: a correctly signed
/// token with no `iss` or no `aud`, or a `null` one, is refused (4034,
/// 4035), with an HS256 secret and an RS256 public key alike, at the
/// smallest, the default and the largest leeway.
#[tokio::test]
async fn a_token_without_a_configured_claim_or_with_a_null_one_is_refused() {
    let (dir, secret) = secret_dir();
    let (private, _) = rsa_pair(dir.path(), "claims");
    let public = dir.path().join("claims.pub.pem");
    let rs = |c: &serde_json::Value| {
        encode(&Header::new(Algorithm::RS256), c, &EncodingKey::from_rsa_pem(&private).expect("key")).expect("token")
    };
    for leeway in ["0", "30", "300"] {
        let claims_flags = ["--auth-issuer", ISSUER, "--auth-audience", AUDIENCE, "--guests", "deny"];
        let hs_server = {
            let mut args = vec!["--auth-hs256-secret-file", secret.to_str().expect("utf-8")];
            args.extend(claims_flags);
            args.extend(["--auth-leeway-s", leeway]);
            Shard::start(SERVER, &args)
        };
        let rs_server = {
            let mut args = vec!["--auth-public-key-file", public.to_str().expect("utf-8")];
            args.extend(claims_flags);
            args.extend(["--auth-leeway-s", leeway]);
            Shard::start(SERVER, &args)
        };
        let signers: [(&Shard, &Signer<'_>); 2] = [(&hs_server, &hs256), (&rs_server, &rs)];
        for (server, sign) in signers {
            for (claim, code) in [("iss", CloseCode::AuthWrongIssuer), ("aud", CloseCode::AuthWrongAudience)] {
                let mut missing = claims("acct-1", 60);
                missing.as_object_mut().expect("object").remove(claim);
                refused_with(hello(server, Some(&sign(&missing)), None).await, code);
                let mut null = claims("acct-1", 60);
                null[claim] = serde_json::Value::Null;
                refused_with(hello(server, Some(&sign(&null)), None).await, code);
            }
            // Signed alike with both claims, the token plays.
            assert!(hello(server, Some(&sign(&claims("acct-1", 60))), None).await.is_ok(), "leeway {leeway}");
        }
    }
}

/// A JWKS is public: a symmetric key in it would let any reader sign tokens.
/// The shard refuses to start with one (pointing to
/// `--auth-hs256-secret-file`), and a running shard keeps its keys when the
/// file is rewritten with one.
#[tokio::test]
async fn a_symmetric_key_in_a_jwks_is_refused() {
    use base64::Engine;
    let dir = WorkDir::new("identity-oct");
    let (private, _) = rsa_pair(dir.path(), "rs");
    let k = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET);
    let oct = serde_json::json!({"kty": "oct", "kid": "shared", "k": k});
    let file = dir.path().join("jwks.json");
    let mut with_oct: serde_json::Value = serde_json::from_str(&jwks(&[("rs", &private)])).expect("json");
    with_oct["keys"].as_array_mut().expect("keys").push(oct);
    std::fs::write(&file, with_oct.to_string()).expect("jwks");
    let mut cmd = Command::new(SERVER);
    cmd.args(["--listen", "127.0.0.1:0", "--auth-jwks-file"]).arg(&file);
    let out = mino_testkit::process::run("mino-server", &mut cmd, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symmetric") && stderr.contains("--auth-hs256-secret-file"), "{stderr}");

    // Started with public keys only; an oct key published later is refused,
    // and the keys before stay.
    std::fs::write(&file, jwks(&[("rs", &private)])).expect("jwks");
    let log = dir.path().join("server.log");
    let args = ["--auth-jwks-file", file.to_str().expect("utf-8"), "--guests", "deny"];
    let server = Shard::start_logging_to(SERVER, &args, &log, "info");
    assert!(hello(&server, Some(&rs256("rs", &private, "a")), None).await.is_ok(), "the public key verifies");
    std::fs::write(&file, with_oct.to_string()).expect("jwks");
    assert!(wait::file_holds(&log, "--auth-hs256-secret-file").await, "the refused reload was not logged");
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("shared".into());
    let minted =
        encode(&header, &serde_json::json!({"sub": "x", "exp": now() + 60}), &EncodingKey::from_secret(SECRET))
            .expect("token");
    refused_with(hello(&server, Some(&minted), None).await, CloseCode::AuthBadSignature);
    assert!(hello(&server, Some(&rs256("rs", &private, "a")), None).await.is_ok(), "the public key still verifies");
}

/// An RSA key pair made with openssl: (private PEM, public PEM).
fn rsa_pair(dir: &Path, name: &str) -> (Vec<u8>, Vec<u8>) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let ok = |out: std::io::Result<std::process::Output>| assert!(out.is_ok_and(|o| o.status.success()), "openssl");
    ok(Command::new("openssl").args(["genrsa", "-out"]).arg(&private).arg("2048").output());
    ok(Command::new("openssl").args(["rsa", "-in"]).arg(&private).args(["-pubout", "-out"]).arg(&public).output());
    (std::fs::read(private).expect("private"), std::fs::read(public).expect("public"))
}

#[tokio::test]
async fn an_rs256_public_key_never_verifies_an_hs256_token_made_with_it() {
    let dir = WorkDir::new("identity-rs");
    let (private, public) = rsa_pair(dir.path(), "rs");
    let path = dir.path().join("rs.pub.pem");
    let server = Shard::start(SERVER, &["--auth-public-key-file", path.to_str().expect("utf-8"), "--guests", "deny"]);
    let c = serde_json::json!({"sub": "acct-9", "exp": now() + 60});
    let rs =
        encode(&Header::new(Algorithm::RS256), &c, &EncodingKey::from_rsa_pem(&private).expect("key")).expect("token");
    assert!(hello(&server, Some(&rs), None).await.is_ok(), "RS256 signed with the private key");
    let confused = encode(&Header::new(Algorithm::HS256), &c, &EncodingKey::from_secret(&public)).expect("token");
    refused_with(hello(&server, Some(&confused), None).await, CloseCode::AuthBadSignature);
}

fn jwks(keys: &[(&str, &[u8])]) -> String {
    let set = JwkSet {
        keys: keys
            .iter()
            .map(|(kid, private)| {
                let key = EncodingKey::from_rsa_pem(private).expect("key");
                let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, Algorithm::RS256).expect("jwk");
                jwk.common.key_id = Some((*kid).to_owned());
                jwk
            })
            .collect(),
    };
    serde_json::to_string(&set).expect("json")
}

fn rs256(kid: &str, private: &[u8], sub: &str) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    let c = serde_json::json!({"sub": sub, "exp": now() + 60});
    encode(&header, &c, &EncodingKey::from_rsa_pem(private).expect("key")).expect("token")
}

#[tokio::test]
async fn jwks_keys_rotate_without_a_restart_on_change_and_on_sighup() {
    let dir = WorkDir::new("identity-jwks");
    let (old, _) = rsa_pair(dir.path(), "old");
    let (new, _) = rsa_pair(dir.path(), "new");
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, jwks(&[("old", &old)])).expect("jwks");
    let server = Shard::start(SERVER, &["--auth-jwks-file", file.to_str().expect("utf-8"), "--guests", "deny"]);
    assert!(hello(&server, Some(&rs256("old", &old, "a")), None).await.is_ok());
    refused_with(hello(&server, Some(&rs256("new", &new, "b")), None).await, CloseCode::AuthBadSignature);
    // The identity service publishes the new key (the file changes).
    std::fs::write(&file, jwks(&[("old", &old), ("new", &new)])).expect("jwks");
    let loaded = || async { hello(&server, Some(&rs256("new", &new, "b")), None).await.is_ok() };
    wait::until("the new key loaded", Duration::from_secs(5), || async { loaded().await.then_some(()) }).await;
    // The old key retires; SIGHUP reloads at once.
    std::fs::write(&file, jwks(&[("new", &new)])).expect("jwks");
    server.signal(Signal::SIGHUP);
    let retired = || async { hello(&server, Some(&rs256("old", &old, "c")), None).await.is_err() };
    wait::until("the retired key refused", Duration::from_secs(5), || async { retired().await.then_some(()) }).await;
}

/// [`hs_shard`] of the place on `redis`, started and ready.
async fn shard(redis: &Redis, id: u32, secret: &Path) -> Shard {
    hs_shard(secret).redis(redis).id(id).ready().await
}

#[tokio::test]
async fn one_account_is_one_player_across_shards_and_a_second_sign_in_takes_it_over() {
    let redis = Redis::start();
    let (_dir, secret) = secret_dir();
    let a = shard(&redis, 1, &secret).await;
    let b = shard(&redis, 2, &secret).await;
    let token = hs256(&claims("acct-7", 120));
    let mut first = hello(&a, Some(&token), None).await.expect("signed in on shard 1");
    let id = first.id();
    let second = hello(&b, Some(&token), None).await.expect("signed in again on shard 2");
    assert_eq!(second.id(), id, "the same player");
    assert!(second.welcome.as_ref().is_some_and(|w| w.resumed), "its session, taken over");
    let (close, error) = tokio::time::timeout(Duration::from_secs(5), first.closed()).await.expect("the first closes");
    assert_eq!((close, error), (Some(CloseCode::SessionReplaced.0), Some(CloseCode::SessionReplaced.0)));
    // A ticket of this account cannot be used with another account's token.
    let other = hs256(&claims("acct-8", 120));
    refused_with(hello(&a, Some(&other), Some(&second.ticket())).await, CloseCode::TicketInvalid);
    // A ticket alone resumes the account's session even with guests refused.
    let back = hello(&a, None, Some(&second.ticket())).await.expect("resumed by its ticket");
    assert_eq!(back.id(), id);
}

/// A second sign-in of an account whose player walks, on the same shard
/// while the first socket is silent (half-open), starts the player standing
/// still: it does not walk on with the old socket's direction.
#[tokio::test]
async fn a_second_sign_in_while_walking_starts_standing_still() {
    let (_dir, secret) = secret_dir();
    let server = hs_shard(&secret).speed(100.0).world_size(10_000.0).flag("peer-timeout-ms", 30_000).start();
    let token = hs256(&claims("acct-walk", 120));
    let mut first = hello(&server, Some(&token), None).await.expect("signed in");
    let (_, at) = first.own_entry().await;
    let dir = if at.x < 5000.0 { 1.0 } else { -1.0 };
    first.send(client::encode_input(1, dir, 0.0)).await;
    while !first.own_entry().await.1.moving {}
    let mut again = hello(&server, Some(&token), None).await.expect("signed in again");
    assert_eq!(again.id(), first.id());
    let (tick, at) = again.own_entry().await;
    loop {
        let (t, e) = again.own_entry().await;
        assert!(!e.moving && e.input_seq == 0 && (e.x, e.y) == (at.x, at.y), "walks on after the sign-in: {e:?}");
        if t >= tick + 10 {
            break;
        }
    }
    drop(first);
}

#[tokio::test]
async fn the_token_never_reaches_the_log() {
    let (dir, secret) = secret_dir();
    let log = dir.path().join("server.log");
    let server = hs_shard(&secret).log_to(&log, "trace").start();
    let good = hs256(&claims("acct-3", 60));
    let expired = hs256(&claims("acct-3", -60));
    let _ = hello(&server, Some(&good), None).await.expect("admitted");
    let _ = hello(&server, Some(&expired), None).await;
    drop(server);
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("access token refused"), "the log says a token was refused");
    for token in [&good, &expired] {
        let signature = token.rsplit('.').next().expect("a signature");
        assert!(!text.contains(signature), "a token reached the log");
    }
}
