//! Section 11, Redis beyond one node: `examples/redis_ha` (server crate),
//! which starts its own Redis Cluster or Sentinel, two shards and the bots
//! in one process: a primary killed under walkers on a cluster and under
//! Sentinel; the load on each of three cluster primaries at each count.
//! Interleaved and repeated so the machine's drift falls on all.

use crate::runner::Run;

/// Builds the example (unless the run skips builds) and runs it.
///
/// Errors: the example cannot be built or copied.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    if !run.skip_build {
        run.status("building the redis_ha example");
        let args = ["build", "--release", "-p", "mino-server", "--example", "redis_ha"].map(String::from);
        anyhow::ensure!(run.command("build", "cargo", &args, None).await?, "building examples/redis_ha failed");
    }
    std::fs::create_dir_all(run.bin.join("examples"))?;
    let example = run.bin.join("examples/redis_ha");
    std::fs::copy(crate::runner::target_root().join("release/examples/redis_ha"), &example)?;
    let p = run.plan.redis.clone();
    let mut runs: Vec<Vec<String>> = ["cluster", "sentinel"]
        .iter()
        .map(|m| vec!["failover".to_owned(), (*m).to_owned(), p.failover_bots.to_string()])
        .collect();
    runs.extend(p.spread.iter().map(|n| vec!["spread".to_owned(), n.to_string()]));
    for i in 1..=run.plan.repeat {
        for a in &runs {
            let name = format!("redis-{}-{i}", a.join("-"));
            run.log(&format!("redis: {} (run {i} of {})", a.join(" "), run.plan.repeat));
            run.status(&name);
            let json = run.paths.raw.join(format!("{name}.json"));
            let mut args = a.clone();
            args.extend([run.binary("mino-server").to_string_lossy().into_owned(), "--json".into()]);
            args.push(json.to_string_lossy().into_owned());
            let log = run.paths.raw.join(format!("logs/{name}.log"));
            if !run.command(&name, &example, &args, Some(&log)).await? {
                run.log(&format!("redis: {} failed: see {}", a.join(" "), log.display()));
            }
        }
    }
    Ok(())
}
