//! Bot behaviour profiles: how often a bot changes direction, stands still,
//! chats and pings. All rates stay well inside the server's limits (input
//! 30/s sustained, chat 1/s sustained).
//!
//! | profile | new direction every | stands still | chat line every | keep-alive ping |
//! |---|---|---|---|---|
//! | `walker` (default) | 1–3 s | never | never | 2 s |
//! | `light` | 2–5 s | 30 % of turns | 30–90 s | 2 s |
//! | `typical` | 1–3 s | 10 % of turns | 10–30 s | 2 s |
//! | `heavy` | 0.2–0.5 s (2–5 inputs/s) | 10 % of turns | 1.5–3 s | 2 s |
//! | `idle` | never (hello, then only pongs to the server's pings) | always | never | none |

use rand::Rng;
use std::time::Duration;

/// The name of a profile, as given on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileName {
    /// Walks, new random direction every 1–3 s; no chat.
    #[default]
    Walker,
    /// Walks slowly changing, often stands, chats every 30–90 s.
    Light,
    /// Walks like a walker, sometimes stands, chats every 10–30 s.
    Typical,
    /// Turns 2–5 times a second, chats every 1.5–3 s.
    Heavy,
    /// Says hello and then nothing (answers the server's pings only).
    Idle,
}

impl ProfileName {
    /// The name as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileName::Walker => "walker",
            ProfileName::Light => "light",
            ProfileName::Typical => "typical",
            ProfileName::Heavy => "heavy",
            ProfileName::Idle => "idle",
        }
    }
}

/// A closed range of durations, sampled uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Every {
    /// Shortest interval.
    pub min: Duration,
    /// Longest interval.
    pub max: Duration,
}

impl Every {
    const fn ms(min: u64, max: u64) -> Every {
        Every { min: Duration::from_millis(min), max: Duration::from_millis(max) }
    }

    /// A uniformly random interval in `[min, max]`.
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        let (lo, hi) = (self.min.as_micros() as u64, self.max.as_micros().max(self.min.as_micros()) as u64);
        Duration::from_micros(rng.random_range(lo..=hi))
    }
}

/// What a bot does once welcomed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// Which profile this is.
    pub name: ProfileName,
    /// Interval between direction changes; None: never sends Input.
    pub turn: Option<Every>,
    /// Probability that a direction change is "stand still" instead, 0..=1.
    pub stand_chance: f64,
    /// Interval between chat lines; None: never chats.
    pub chat: Option<Every>,
    /// Keep-alive Ping interval (also measures the round trip); None: no
    /// keep-alive (a WebTransport session still pings when its silence calls
    /// for it: `crate::silence`).
    pub ping: Option<Duration>,
}

impl Profile {
    /// The profile called `name`.
    pub fn of(name: ProfileName) -> Profile {
        let ping = Some(Duration::from_secs(2));
        let (turn, stand_chance, chat, ping) = match name {
            ProfileName::Walker => (Some(Every::ms(1000, 3000)), 0.0, None, ping),
            ProfileName::Light => (Some(Every::ms(2000, 5000)), 0.3, Some(Every::ms(30_000, 90_000)), ping),
            ProfileName::Typical => (Some(Every::ms(1000, 3000)), 0.1, Some(Every::ms(10_000, 30_000)), ping),
            ProfileName::Heavy => (Some(Every::ms(200, 500)), 0.1, Some(Every::ms(1500, 3000)), ping),
            ProfileName::Idle => (None, 1.0, None, None),
        };
        Profile { name, turn, stand_chance, chat, ping }
    }

    /// A new direction: a random unit vector, or `(0, 0)` with `stand_chance`.
    pub fn direction(&self, rng: &mut impl Rng) -> (f32, f32) {
        if rng.random_bool(self.stand_chance.clamp(0.0, 1.0)) {
            return (0.0, 0.0);
        }
        let a = rng.random_range(0.0..std::f32::consts::TAU);
        (a.cos(), a.sin())
    }

    /// Upper bound of inputs per second this profile sends.
    pub fn max_inputs_per_s(&self) -> f64 {
        self.turn.map_or(0.0, |t| 1.0 / t.min.as_secs_f64())
    }

    /// Upper bound of chat lines per second this profile sends.
    pub fn max_chats_per_s(&self) -> f64 {
        self.chat.map_or(0.0, |c| 1.0 / c.min.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const ALL: [ProfileName; 5] =
        [ProfileName::Walker, ProfileName::Light, ProfileName::Typical, ProfileName::Heavy, ProfileName::Idle];

    #[test]
    fn every_profile_stays_inside_the_servers_rate_limits() {
        for name in ALL {
            let p = Profile::of(name);
            assert!(p.max_inputs_per_s() <= 30.0, "{name:?}");
            assert!(p.max_chats_per_s() < 1.0, "{name:?}");
            let cli_name = clap::ValueEnum::to_possible_value(&name).map(|v| v.get_name().to_owned());
            assert_eq!(cli_name.as_deref(), Some(name.as_str()));
        }
    }

    #[test]
    fn walker_turns_every_one_to_three_seconds_and_never_stands() {
        let p = Profile::of(ProfileName::Walker);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let turn = p.turn.expect("walker turns");
        for _ in 0..1000 {
            let d = turn.sample(&mut rng);
            assert!(d >= Duration::from_secs(1) && d <= Duration::from_secs(3));
            let (x, y) = p.direction(&mut rng);
            assert!(((x * x + y * y).sqrt() - 1.0).abs() < 1e-5);
        }
        assert!(p.chat.is_none());
    }

    #[test]
    fn idle_sends_nothing_and_heavy_is_busier_than_light() {
        let idle = Profile::of(ProfileName::Idle);
        assert!(idle.turn.is_none() && idle.chat.is_none() && idle.ping.is_none());
        let heavy = Profile::of(ProfileName::Heavy);
        let light = Profile::of(ProfileName::Light);
        assert!(heavy.max_inputs_per_s() > light.max_inputs_per_s());
        assert!(heavy.max_chats_per_s() > light.max_chats_per_s());
    }

    #[test]
    fn stand_chance_is_honoured() {
        let p = Profile::of(ProfileName::Light);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
        let still = (0..10_000).filter(|_| p.direction(&mut rng) == (0.0, 0.0)).count();
        assert!((2500..3500).contains(&still), "{still}");
    }
}
