use super::*;

/// `run --limit` shortens its interval while pressure is high and relaxes it after: an
/// event starts the hold, a high level when it runs out extends it, a normal one ends it.
#[test]
fn the_pressure_hold_lasts_while_the_level_is_high_and_relaxes_after() {
    let t0 = Instant::now();
    let asked = std::cell::Cell::new(0);
    let asked = &asked;
    let level = |high: bool| {
        move || {
            asked.set(asked.get() + 1);
            high
        }
    };
    let started = hold(t0, None, true, &level(false));
    assert_eq!(started, Some(t0 + PRESSURE_HOLD));
    // Within the hold: kept, the level not even read.
    let mid = t0 + PRESSURE_HOLD / 2;
    assert_eq!(hold(mid, started, false, &level(false)), started);
    assert_eq!(asked.get(), 0);
    // Ran out while still high: extended from now.
    let out = t0 + PRESSURE_HOLD;
    let extended = hold(out, started, false, &level(true));
    assert_eq!(extended, Some(out + PRESSURE_HOLD));
    // Ran out and the level is normal (or unknown): relaxed.
    let later = out + PRESSURE_HOLD;
    assert_eq!(hold(later, extended, false, &level(false)), None);
    // No hold and no event: nothing, whatever the level says (the event starts it).
    assert_eq!(hold(later, None, false, &level(true)), None);
    assert_eq!(asked.get(), 2);
}

#[test]
fn deadlines_saturate_instead_of_overflowing() {
    let now = Instant::now();
    // `now + Duration::MAX` panics ("overflow when adding duration to instant").
    assert!(now.checked_add(Duration::MAX).is_none());
    let far = after(now, Duration::MAX);
    assert!(far > now && far - now <= Duration::from_secs(365 * 86_400));
    assert_eq!(
        after(now, Duration::from_secs(5)) - now,
        Duration::from_secs(5)
    );
}
