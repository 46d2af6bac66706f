//! With `--static-dir`, the shard serves the browser client's files at `/`,
//! and answers paths no file can have with 404 rather than an error.

use mino_testkit::Shard;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A fresh folder (under the system temp dir) with an index and a script.
fn client_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mino-static-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("assets")).expect("mkdir");
    std::fs::write(dir.join("index.html"), "<!doctype html><title>mino</title>").expect("index");
    std::fs::write(dir.join("assets/app.js"), "console.log('mino')").expect("script");
    dir
}

#[tokio::test]
async fn serves_the_client_and_refuses_impossible_paths_with_404() {
    let dir = client_dir();
    let server = Shard::start(SERVER, &["--static-dir", dir.to_str().expect("utf-8 path")]);
    let index = server.get("/").await;
    assert_eq!((index.status, index.text().contains("<title>mino</title>")), (200, true), "index at /");
    let script = server.get("/assets/app.js").await;
    assert_eq!((script.status, script.text()), (200, "console.log('mino')".to_owned()));
    assert_eq!(server.get("/missing.js").await.status, 404);
    assert_eq!(server.get(&format!("/{}", "a".repeat(300))).await.status, 404, "a segment longer than NAME_MAX");
    assert_eq!(server.get(&format!("/{}", "ab/".repeat(400))).await.status, 404, "a path of 1,200 bytes");
    assert_eq!(server.get("/../../etc/passwd").await.status, 404, "nothing outside the folder");
    assert_eq!(server.get("/healthz").await.status, 200, "routes still win over files");
    let _ = std::fs::remove_dir_all(dir);
}
