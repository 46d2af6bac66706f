//! Where a bot walks: anywhere ([`Movement::Wander`], its profile's random
//! turns), inside a region (`--density`: random turns, and steered back in
//! whenever it is outside and not heading in), or to one point where it stays
//! (the `crowd` scenario). [`Steering`] decides, from each position the server
//! reports, whether to send a new direction; it does no I/O.

use crate::region::Region;
use rand::Rng;
use std::time::Duration;
use tokio::time::Instant;

/// A gathering walker stops within this many ticks of walking from its point.
pub const ARRIVE_STEPS: f32 = 3.0;

/// A stopped gathering walker walks back once farther than this many ticks of
/// walking (well above [`ARRIVE_STEPS`], so that it does not dither).
pub const RETURN_STEPS: f32 = 6.0;

/// Least time between two steering inputs: the server applies an input on its
/// next tick, so the positions of the next few ticks still show the old
/// direction.
pub const STEER_COOLDOWN: Duration = Duration::from_millis(150);

/// A gathering walker on its way keeps its direction while within this angle
/// of its point's (cosine of 10 degrees).
const ON_COURSE_COS: f32 = 0.985;

/// Where the bots of a run walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Movement {
    /// Anywhere in the world, turning as the profile says.
    #[default]
    Wander,
    /// Inside the region (world units), turning as the profile says.
    Within(Region),
    /// To a point, then stand there; the profile's turns are ignored.
    Gather(Gathering),
}

/// Where a crowd gathers, and how still it stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gathering {
    /// The point, world units.
    pub point: (f32, f32),
    /// The share of the bots (0 to 1) that, once at the point, take a step
    /// now and then ([`Steering::shuffle`], every [`SHUFFLE_EVERY`] or so):
    /// `crowd --shuffle`. With none the crowd stands still, and a shard that
    /// sends only what changed sends it nothing.
    pub shuffle: f32,
}

/// A shuffling crowd bot steps out about this often: each wait is drawn
/// from 1 to 3 s (mean 2 s, as `delta_trace crowd --shuffle` steps).
pub const SHUFFLE_EVERY: std::ops::RangeInclusive<Duration> = Duration::from_secs(1)..=Duration::from_secs(3);

/// One bot's steering state.
#[derive(Clone, Debug)]
pub struct Steering {
    movement: Movement,
    step: f32,
    dir: (f32, f32),
    last_steer: Option<Instant>,
}

impl Steering {
    /// Steering for `movement` of a walker going `step` world units a tick,
    /// standing still.
    pub fn new(movement: Movement, step: f32) -> Steering {
        Steering { movement, step: step.max(f32::MIN_POSITIVE), dir: (0.0, 0.0), last_steer: None }
    }

    /// The direction last sent (a unit vector, or `(0, 0)` standing).
    pub fn direction(&self) -> (f32, f32) {
        self.dir
    }

    /// A profile turn to `dir`: the direction to send, or None when this
    /// movement ignores the profile's turns.
    pub fn turn(&mut self, dir: (f32, f32)) -> Option<(f32, f32)> {
        match self.movement {
            Movement::Gather(_) => None,
            Movement::Wander | Movement::Within(_) => {
                self.dir = dir;
                Some(dir)
            }
        }
    }

    /// The server says the bot is at `pos` at `now`: a direction to send, if
    /// the bot must change course.
    pub fn on_position(&mut self, pos: (f32, f32), now: Instant, rng: &mut impl Rng) -> Option<(f32, f32)> {
        let want = match self.movement {
            Movement::Wander => None,
            Movement::Within(region) => self.back_inside(&region, pos, rng),
            Movement::Gather(g) => self.towards(g.point, pos),
        }?;
        if self.last_steer.is_some_and(|t| now.saturating_duration_since(t) < STEER_COOLDOWN) {
            return None;
        }
        self.last_steer = Some(now);
        self.dir = want;
        Some(want)
    }

    /// A shuffling crowd bot's step: standing near its point (within
    /// [`RETURN_STEPS`] of walking) at `pos`, it sets out: in a random
    /// direction when within [`ARRIVE_STEPS`], else back towards the point (a
    /// stop sent near the point takes effect a tick or more later, so a bot
    /// can come to rest past [`ARRIVE_STEPS`], where [`Steering::on_position`]
    /// leaves it standing). The positions that follow stop it once the
    /// cooldown has passed and it is within [`ARRIVE_STEPS`], or walk it back
    /// when it went past. None when not gathering, walking, farther than
    /// [`RETURN_STEPS`] (it is still on its way), or within the cooldown.
    pub fn shuffle(&mut self, pos: (f32, f32), now: Instant, rng: &mut impl Rng) -> Option<(f32, f32)> {
        let Movement::Gather(g) = self.movement else { return None };
        let distance = (g.point.0 - pos.0).hypot(g.point.1 - pos.1);
        let cooled = self.last_steer.is_none_or(|t| now.saturating_duration_since(t) >= STEER_COOLDOWN);
        if self.dir != (0.0, 0.0) || distance > RETURN_STEPS * self.step || !cooled {
            return None;
        }
        let dir = if distance > ARRIVE_STEPS * self.step {
            unit(g.point, pos)?
        } else {
            let a = rng.random_range(0.0..std::f32::consts::TAU);
            (a.cos(), a.sin())
        };
        self.dir = dir;
        self.last_steer = Some(now);
        Some(dir)
    }

    fn back_inside(&self, region: &Region, pos: (f32, f32), rng: &mut impl Rng) -> Option<(f32, f32)> {
        if region.contains(pos, 0.0) || region.heading_inward(pos, self.dir) {
            return None;
        }
        unit(region.random_point(rng), pos)
    }

    fn towards(&self, point: (f32, f32), pos: (f32, f32)) -> Option<(f32, f32)> {
        let distance = (point.0 - pos.0).hypot(point.1 - pos.1);
        let standing = self.dir == (0.0, 0.0);
        if distance <= ARRIVE_STEPS * self.step {
            return (!standing).then_some((0.0, 0.0));
        }
        if standing && distance <= RETURN_STEPS * self.step && self.last_steer.is_some() {
            return None;
        }
        let want = unit(point, pos)?;
        let on_course = want.0 * self.dir.0 + want.1 * self.dir.1 >= ON_COURSE_COS;
        (!on_course).then_some(want)
    }
}

/// The unit vector from `from` to `to`; None when they coincide.
fn unit(to: (f32, f32), from: (f32, f32)) -> Option<(f32, f32)> {
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let n = dx.hypot(dy);
    (n > f32::EPSILON).then(|| (dx / n, dy / n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const REGION: Region = Region { min_x: 400.0, min_y: 400.0, max_x: 600.0, max_y: 600.0 };

    fn rng() -> rand::rngs::SmallRng {
        rand::rngs::SmallRng::seed_from_u64(5)
    }

    #[test]
    fn wandering_never_steers_and_takes_every_turn() {
        let mut s = Steering::new(Movement::Wander, 6.0);
        assert_eq!(s.turn((1.0, 0.0)), Some((1.0, 0.0)));
        assert_eq!(s.on_position((-50.0, 3000.0), Instant::now(), &mut rng()), None);
    }

    #[test]
    fn a_confined_walker_outside_is_sent_back_in_once() {
        let mut s = Steering::new(Movement::Within(REGION), 6.0);
        let mut rng = rng();
        let t0 = Instant::now();
        assert_eq!(s.on_position((500.0, 500.0), t0, &mut rng), None, "inside");
        s.turn((1.0, 0.0));
        let dir = s.on_position((601.0, 500.0), t0, &mut rng).expect("steered back");
        assert!(dir.0 < 0.0, "{dir:?}");
        assert!((dir.0.hypot(dir.1) - 1.0).abs() < 1e-5);
        let later = t0 + STEER_COOLDOWN * 2;
        assert_eq!(s.on_position((603.0, 500.0), later, &mut rng), None, "already heading in");
    }

    #[test]
    fn steering_waits_for_the_cooldown() {
        let mut s = Steering::new(Movement::Within(REGION), 6.0);
        let mut rng = rng();
        let t0 = Instant::now();
        assert!(s.on_position((300.0, 500.0), t0, &mut rng).is_some());
        s.turn((-1.0, 0.0)); // a profile turn outward
        assert_eq!(s.on_position((299.0, 500.0), t0 + Duration::from_millis(50), &mut rng), None, "cooling down");
        assert!(s.on_position((298.0, 500.0), t0 + STEER_COOLDOWN, &mut rng).is_some());
    }

    #[test]
    fn gathering_walks_to_the_point_stops_and_stays() {
        let mut s = Steering::new(Movement::Gather(Gathering { point: (500.0, 500.0), shuffle: 0.0 }), 6.0);
        let mut rng = rng();
        let mut t = Instant::now();
        assert_eq!(s.turn((0.0, 1.0)), None, "profile turns are ignored");
        let dir = s.on_position((100.0, 500.0), t, &mut rng).expect("go");
        assert!((dir.0 - 1.0).abs() < 1e-5 && dir.1.abs() < 1e-5);
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position((300.0, 501.0), t, &mut rng), None, "on course");
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position((490.0, 500.0), t, &mut rng), Some((0.0, 0.0)), "arrived: stop");
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position((505.0, 500.0), t, &mut rng), None, "a little past: stays");
        t += STEER_COOLDOWN;
        let back = s.on_position((540.0, 500.0), t, &mut rng).expect("too far: back");
        assert!(back.0 < 0.0);
    }

    #[test]
    fn a_shuffling_bot_steps_out_from_its_point_and_comes_back() {
        let point = (500.0, 500.0);
        let mut s = Steering::new(Movement::Gather(Gathering { point, shuffle: 1.0 }), 6.0);
        let mut rng = rng();
        let mut t = Instant::now();
        assert_eq!(s.shuffle((100.0, 500.0), t, &mut rng), None, "not at its point yet");
        let out = s.shuffle(point, t, &mut rng).expect("at its point, standing: a step");
        assert!((out.0.hypot(out.1) - 1.0).abs() < 1e-5, "a unit direction: {out:?}");
        assert_eq!(s.shuffle(point, t + STEER_COOLDOWN, &mut rng), None, "already stepping");
        // Within the cooldown the positions that follow change nothing.
        let walked = |ticks: f32| (point.0 + out.0 * 6.0 * ticks, point.1 + out.1 * 6.0 * ticks);
        assert_eq!(s.on_position(walked(1.0), t + Duration::from_millis(50), &mut rng), None, "cooling down");
        // Past the arrival distance once cooled: back to the point, then a stop.
        t += STEER_COOLDOWN;
        let back = s.on_position(walked(4.0), t, &mut rng).expect("walks back");
        assert!(back.0 * out.0 + back.1 * out.1 < -0.99, "back the way it came: {back:?} after {out:?}");
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position(walked(1.0), t, &mut rng), Some((0.0, 0.0)), "at its point again: stop");
        t += STEER_COOLDOWN;
        assert!(s.shuffle(walked(1.0), t, &mut rng).is_some(), "and steps again when asked");
        let mut still = Steering::new(Movement::Within(REGION), 6.0);
        assert_eq!(still.shuffle(point, t, &mut rng), None, "only a gathering bot shuffles");
    }

    #[test]
    fn a_shuffling_bot_that_came_to_rest_past_its_point_steps_back_towards_it() {
        let point = (500.0, 500.0);
        let mut s = Steering::new(Movement::Gather(Gathering { point, shuffle: 1.0 }), 6.0);
        let mut rng = rng();
        let mut t = Instant::now();
        // Walking back, the stop took effect 4 steps past the point.
        s.on_position((100.0, 500.0), t, &mut rng).expect("go");
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position((490.0, 500.0), t, &mut rng), Some((0.0, 0.0)), "arrived: stop");
        t += STEER_COOLDOWN;
        let rest = (524.0, 500.0);
        assert_eq!(s.on_position(rest, t, &mut rng), None, "standing within the return distance: stays");
        let step = s.shuffle(rest, t, &mut rng).expect("standing 4 steps out: a step all the same");
        assert!(step.0 < -0.99, "towards the point: {step:?}");
        t += STEER_COOLDOWN;
        assert_eq!(s.on_position((506.0, 500.0), t, &mut rng), Some((0.0, 0.0)), "back within arrival: stop");
        t += STEER_COOLDOWN;
        assert_eq!(s.shuffle((540.0, 500.0), t, &mut rng), None, "beyond the return distance it is on its way");
    }
}
