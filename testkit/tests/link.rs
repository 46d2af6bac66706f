//! The lossy link ([`mino_testkit::link`]): UDP and TCP through it are
//! delayed by the round trip asked for, UDP loses about what was asked each
//! way, TCP delivers every byte in order despite the loss, and loopback
//! outside the link is untouched. Each test runs in a child process of its
//! own, in a private network namespace (the link changes its routes).

use mino_testkit::link::{self, Impairment, Link, FAR, NEAR};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// 10 % loss each way, 40 ms round trip, no jitter.
fn impairment() -> Impairment {
    Impairment { loss: 0.10, delay: Duration::from_millis(20), jitter: Duration::ZERO, seed: 7 }
}

#[test]
fn udp_through_the_link_takes_the_round_trip_and_loses_what_was_asked() {
    link::test_in_namespace("udp_through_the_link_takes_the_round_trip_and_loses_what_was_asked", || {
        let link = Link::start(impairment()).expect("the link starts");
        let echo = UdpSocket::bind((NEAR, 0)).expect("bind the echo");
        let port = echo.local_addr().expect("its port").port();
        let echoing = std::thread::spawn(move || {
            echo.set_read_timeout(Some(Duration::from_secs(2))).expect("timeout");
            let mut buf = [0u8; 64];
            while let Ok((n, from)) = echo.recv_from(&mut buf) {
                let _ = echo.send_to(&buf[..n], from);
            }
        });
        let client = UdpSocket::bind((NEAR, 0)).expect("bind the client");
        client.connect(SocketAddr::from((FAR, port))).expect("connect");
        client.set_read_timeout(Some(Duration::from_millis(500))).expect("timeout");
        const SENT: u32 = 400;
        let start = Instant::now();
        // Read as they come (a socket's buffer holds about a hundred of
        // these; losses there would not be the link's).
        let receiving = {
            let client = client.try_clone().expect("clone");
            std::thread::spawn(move || {
                let mut back = Vec::new();
                let mut buf = [0u8; 64];
                while let Ok(n) = client.recv(&mut buf) {
                    assert_eq!(n, 4, "a datagram comes back whole");
                    back.push((u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]), start.elapsed()));
                }
                back
            })
        };
        // One a millisecond, for the same reason.
        for i in 0..SENT {
            client.send(&i.to_le_bytes()).expect("send");
            std::thread::sleep(Duration::from_millis(1));
        }
        let back = receiving.join().expect("the receiver ends");
        // Kept both ways: 0.9 x 0.9 = 81 % (324 of 400; 5 standard deviations: 285 to 363).
        assert!((285..=363).contains(&back.len()), "{} of {SENT} came back", back.len());
        let first = back.iter().map(|b| b.1).min().expect("some came back");
        assert!(first >= Duration::from_millis(40), "the first came back after {first:?}, under the round trip");
        assert!(back.windows(2).all(|w| w[0].0 < w[1].0), "no datagram overtook another");
        // Each read packet was passed or dropped: SENT, and the echoes of
        // those passed; so whatever did not come back, the link dropped.
        let counts = link.counts();
        assert_eq!(counts.dropped, u64::from(SENT) - back.len() as u64, "only the link lost datagrams: {counts:?}");
        // Loopback outside the link is as fast as ever.
        let mut buf = [0u8; 8];
        let plain = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let to = plain.local_addr().expect("addr");
        let t = Instant::now();
        plain.send_to(b"x", to).expect("send");
        plain.recv_from(&mut buf).expect("loopback");
        assert!(t.elapsed() < Duration::from_millis(20), "127.0.0.1 goes around the link");
        drop(link);
        echoing.join().expect("the echo ends");
    });
}

#[test]
fn tcp_through_the_link_delivers_every_byte_in_order_despite_loss() {
    link::test_in_namespace("tcp_through_the_link_delivers_every_byte_in_order_despite_loss", || {
        let link = Link::start(impairment()).expect("the link starts");
        let listener = TcpListener::bind((NEAR, 0)).expect("listen");
        let port = listener.local_addr().expect("its port").port();
        const BYTES: usize = 256 * 1024;
        let serving = std::thread::spawn(move || {
            let (mut s, from) = listener.accept().expect("accept");
            assert_eq!(from.ip(), FAR, "the peer is seen at the far address");
            let data: Vec<u8> = (0..BYTES).map(|i| (i % 251) as u8).collect();
            s.write_all(&data).expect("write");
        });
        let start = Instant::now();
        let mut s =
            TcpStream::connect_timeout(&SocketAddr::from((FAR, port)), Duration::from_secs(10)).expect("connect");
        let connected = start.elapsed();
        s.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
        let mut got = Vec::new();
        s.read_to_end(&mut got).expect("read to the end");
        serving.join().expect("the server wrote it all");
        assert_eq!(got.len(), BYTES);
        assert!(got.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8), "every byte in order");
        assert!(connected >= Duration::from_millis(40), "connected in {connected:?}, under the round trip");
        assert!(link.counts().dropped > 0, "some segments were lost and resent: {:?}", link.counts());
    });
}

#[test]
fn a_link_refuses_to_start_outside_a_private_namespace() {
    // This test's process is in the machine's namespace.
    let err = Link::start(impairment()).expect_err("refused");
    assert!(err.to_string().contains("private network namespace"), "{err}");
}
