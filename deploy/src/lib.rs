//! mino's deployment kit is the files of this folder (nginx, systemd, Redis,
//! Prometheus and Grafana configuration, scripts); this crate holds only their
//! tests (`tests/`), which run them for real through `mino-testkit`.
