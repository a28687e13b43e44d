//! `[gateway]`: the gateway's session mode, topic mode and explicit fault schedule
//! (strategy `gateway` only). Any of the schedule's lists makes the whole schedule
//! explicit: a list left out has no events.

use super::convert::Located;
use super::limits::{SCHEDULE_LEN_MAX, TURNS_MAX};
use compactsim_harness::engine::plan::{parse_crash, CasePlan, GatewayPlan, GatewaySchedule};
use compactsim_hermes::agent::SessionMode;
use compactsim_hermes::strategy::Strategy;
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

/// `[gateway]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayDoc {
    /// `rotate` or `in-place` (`[agent] in_place` under another name).
    pub session_mode: Option<Spanned<String>>,
    /// Telegram DM topic mode: the session key has a topic binding.
    pub topic: Option<bool>,
    /// Session hygiene compresses a history of this many messages (4 to
    /// [`HYGIENE_MESSAGE_LIMIT_MAX`]).
    pub hygiene_message_limit: Option<Spanned<i64>>,
    pub restarts: Option<Spanned<Vec<Spanned<i64>>>>,
    pub crashes: Option<Spanned<Vec<Spanned<CrashDoc>>>>,
    pub duplicates: Option<Spanned<Vec<Spanned<i64>>>>,
    pub compress: Option<Spanned<Vec<Spanned<i64>>>>,
    pub reset: Option<Spanned<Vec<Spanned<i64>>>>,
    pub stops: Option<Spanned<Vec<Spanned<i64>>>>,
}

/// One crash: `{ turn = 3, at = "after-write" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashDoc {
    pub turn: Spanned<i64>,
    pub at: Spanned<String>,
}

/// The largest hard message limit a `[gateway]` table may set.
pub const HYGIENE_MESSAGE_LIMIT_MAX: u32 = 100_000;

fn at<T>(span: Range<usize>, message: impl Into<String>) -> Result<T, Located> {
    Err((Some(span), message.into()))
}

/// A turn of the schedule: 0 to [`TURNS_MAX`].
fn turn(t: &Spanned<i64>) -> Result<u32, Located> {
    match u32::try_from(*t.get_ref()) {
        Ok(n) if n <= TURNS_MAX => Ok(n),
        _ => at(
            t.span(),
            format!(
                "out of range: {} (a turn is between 0 and {TURNS_MAX})",
                t.get_ref()
            ),
        ),
    }
}

/// A list of turns: in range, strictly ascending, at most [`SCHEDULE_LEN_MAX`].
fn turns(list: &Spanned<Vec<Spanned<i64>>>, name: &str) -> Result<Vec<u32>, Located> {
    if list.get_ref().len() > SCHEDULE_LEN_MAX {
        return at(
            list.span(),
            format!("{name} has more than {SCHEDULE_LEN_MAX} entries"),
        );
    }
    let mut out: Vec<u32> = Vec::new();
    for t in list.get_ref() {
        let n = turn(t)?;
        if out.last().is_some_and(|&last| last >= n) {
            return at(
                t.span(),
                format!("{name} lists turns in strictly ascending order"),
            );
        }
        out.push(n);
    }
    Ok(out)
}

fn crashes(
    list: &Spanned<Vec<Spanned<CrashDoc>>>,
) -> Result<Vec<(u32, compactsim_harness::engine::gateway::faults::Crash)>, Located> {
    if list.get_ref().len() > SCHEDULE_LEN_MAX {
        return at(
            list.span(),
            format!("crashes has more than {SCHEDULE_LEN_MAX} entries"),
        );
    }
    let mut out: Vec<(u32, _)> = Vec::new();
    for c in list.get_ref() {
        let n = turn(&c.get_ref().turn)?;
        if out.last().is_some_and(|&(last, _)| last >= n) {
            return at(
                c.span(),
                "crashes lists turns in strictly ascending order (one crash per turn)",
            );
        }
        let point =
            parse_crash(c.get_ref().at.get_ref()).or_else(|e| at(c.get_ref().at.span(), e))?;
        out.push((n, point));
    }
    Ok(out)
}

/// Applies `[gateway]` to `plan`; an error at the table when the strategy is not
/// `gateway`, and at `session_mode` when `[agent] in_place` says otherwise.
pub fn apply(
    plan: &mut CasePlan,
    doc: &Spanned<GatewayDoc>,
    strategy: Strategy,
) -> Result<(), Located> {
    if !matches!(strategy, Strategy::Gateway(_)) {
        return at(
            doc.span(),
            format!("[gateway] applies to strategy = \"gateway\", not {strategy}"),
        );
    }
    let g = doc.get_ref();
    if let Some(mode) = &g.session_mode {
        let m = SessionMode::parse(mode.get_ref()).or_else(|e| at(mode.span(), e))?;
        if plan.agent.in_place.is_some_and(|p| p != m.in_place()) {
            return at(
                mode.span(),
                "session_mode contradicts [agent] in_place (they are one setting: keep one)",
            );
        }
        plan.agent.in_place = Some(m.in_place());
    }
    let lists = [&g.restarts, &g.duplicates, &g.compress, &g.reset, &g.stops];
    let explicit = lists.iter().any(|l| l.is_some()) || g.crashes.is_some();
    let list = |l: &Option<Spanned<Vec<Spanned<i64>>>>, name| {
        l.as_ref().map_or(Ok(Vec::new()), |l| turns(l, name))
    };
    let schedule = if explicit {
        Some(GatewaySchedule {
            restarts: list(&g.restarts, "restarts")?,
            crashes: g.crashes.as_ref().map_or(Ok(Vec::new()), crashes)?,
            duplicates: list(&g.duplicates, "duplicates")?,
            compress: list(&g.compress, "compress")?,
            reset: list(&g.reset, "reset")?,
            stops: list(&g.stops, "stops")?,
        })
    } else {
        None
    };
    let hygiene_message_limit = match &g.hygiene_message_limit {
        None => None,
        Some(n) => match u32::try_from(*n.get_ref()) {
            Ok(v) if (4..=HYGIENE_MESSAGE_LIMIT_MAX).contains(&v) => Some(v),
            _ => {
                return at(
                    n.span(),
                    format!(
                        "hygiene_message_limit out of range: {} (4 to {HYGIENE_MESSAGE_LIMIT_MAX})",
                        n.get_ref()
                    ),
                )
            }
        },
    };
    plan.gateway = GatewayPlan {
        topic: g.topic,
        schedule,
        hygiene_message_limit,
    };
    Ok(())
}
