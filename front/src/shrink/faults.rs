//! Candidate reductions of a plan's fault schedules: faults cleared (summarizer and
//! provider outcomes back to `ok`, restarts and gateway events removed) and faults moved
//! sooner (ok calls removed before them).

use super::candidates::{cand, chunks, lazy, Lazy};
use compactsim_fakes::provider::ProviderOutcome;
use compactsim_fakes::summarizer::SummaryOutcome;
use compactsim_harness::engine::plan::CasePlan;

/// Indexes of the non-ok entries of a schedule.
fn faulty<T: Copy>(schedule: &Option<Vec<T>>, ok: impl Fn(T) -> bool) -> Vec<usize> {
    let all = schedule.as_deref().unwrap_or_default();
    (0..all.len()).filter(|&i| !ok(all[i])).collect()
}

/// Every kind of fault at once, then each kind, then chunks of each schedule's faults
/// (halving, from the end) down to single faults: summarizer and provider outcomes back
/// to `ok`, restarts removed.
pub(super) fn faults(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let restarts = plan.restarts.clone().unwrap_or_default();
    let summary = faulty(&plan.summary_outcomes, SummaryOutcome::is_ok);
    let provider = faulty(&plan.provider_outcomes, ProviderOutcome::is_ok);
    let no_summary_faults = |p: &mut CasePlan| p.summary_outcomes = Some(Vec::new());
    let no_provider_faults = |p: &mut CasePlan| p.provider_outcomes = Some(Vec::new());
    let no_restarts = |p: &mut CasePlan| p.restarts = Some(Vec::new());
    let gateway = plan.gateway.schedule.clone().unwrap_or_default();
    let no_gateway_faults = |p: &mut CasePlan| p.gateway.schedule = Some(Default::default());
    type Clear<'a> = (&'a str, bool, &'a dyn Fn(&mut CasePlan));
    let kinds: [Clear; 4] = [
        ("every summary ok", !summary.is_empty(), &no_summary_faults),
        (
            "every provider call ok",
            !provider.is_empty(),
            &no_provider_faults,
        ),
        ("no restarts", !restarts.is_empty(), &no_restarts),
        ("no gateway events", !gateway.is_empty(), &no_gateway_faults),
    ];
    let present: Vec<&Clear> = kinds.iter().filter(|k| k.1).collect();
    let mut out = Vec::new();
    if present.len() > 1 {
        let mut p = plan.clone();
        present.iter().for_each(|k| (k.2)(&mut p));
        let names: Vec<&str> = present.iter().map(|k| k.0).collect();
        out.push(cand(names.join(", "), p));
    }
    for (name, _, clear) in present {
        let mut p = plan.clone();
        clear(&mut p);
        out.push(cand(*name, p));
    }
    if gateway.len() > 1 {
        for (change, schedule) in gateway.without_each() {
            out.push(lazy(change, move || {
                let mut p = plan.clone();
                p.gateway.schedule = Some(schedule);
                p
            }));
        }
    }
    if restarts.len() > 1 {
        for (i, gone) in restarts.iter().enumerate() {
            out.push(lazy(format!("no restart before turn {gone}"), move || {
                let mut p = plan.clone();
                p.restarts.as_mut().expect("restarts").remove(i);
                p
            }));
        }
    }
    for (start, len) in chunks(summary.len())
        .into_iter()
        .filter(|c| c.1 < summary.len())
    {
        let calls = summary[start..start + len].to_vec();
        out.push(lazy(calls_ok("summary", &calls), move || {
            let mut p = plan.clone();
            let o = p.summary_outcomes.as_mut().expect("outcomes");
            calls.iter().for_each(|&i| o[i] = SummaryOutcome::Ok);
            p
        }));
    }
    for (start, len) in chunks(provider.len())
        .into_iter()
        .filter(|c| c.1 < provider.len())
    {
        let calls = provider[start..start + len].to_vec();
        out.push(lazy(calls_ok("provider", &calls), move || {
            let mut p = plan.clone();
            let o = p.provider_outcomes.as_mut().expect("outcomes");
            calls.iter().for_each(|&i| o[i] = ProviderOutcome::Ok);
            p
        }));
    }
    out
}

/// The fault schedules with ok calls removed before a fault (see [`earlier`]).
pub(super) fn sooner(plan: &CasePlan) -> Vec<Lazy<'_>> {
    let mut out = Vec::new();
    for (start, len, schedule) in earlier(plan.summary_outcomes.as_deref(), SummaryOutcome::is_ok) {
        out.push(lazy(moved_earlier("summary", start, len), move || {
            let mut p = plan.clone();
            p.summary_outcomes = Some(schedule);
            p
        }));
    }
    for (start, len, schedule) in earlier(plan.provider_outcomes.as_deref(), ProviderOutcome::is_ok)
    {
        out.push(lazy(moved_earlier("provider", start, len), move || {
            let mut p = plan.clone();
            p.provider_outcomes = Some(schedule);
            p
        }));
    }
    out
}

/// "summary calls 3..6 removed: the faults after them come earlier".
fn moved_earlier(what: &str, start: usize, len: usize) -> String {
    format!(
        "{what} {} removed: the faults after them come earlier",
        super::candidates::span("call", start, len).replacen("call", "ok call", 1)
    )
}

/// A fault schedule with ok calls removed before a fault, so that it and every later
/// fault come that many calls earlier (and the case can end sooner): for each run of
/// ok calls that a fault follows, the run's last len, len/2, ..., 1 calls. Each
/// candidate is (first removed index, calls removed, the schedule); a shorter schedule
/// every time, so repeating it terminates.
fn earlier<T: Copy>(schedule: Option<&[T]>, ok: impl Fn(T) -> bool) -> Vec<(usize, usize, Vec<T>)> {
    let all = schedule.unwrap_or_default();
    let mut out = Vec::new();
    let mut run_start = 0;
    for (i, &o) in all.iter().enumerate() {
        if ok(o) {
            continue;
        }
        let run = i - run_start;
        let mut k = run;
        while k > 0 {
            let mut schedule = all.to_vec();
            schedule.drain(i - k..i);
            out.push((i - k, k, schedule));
            k /= 2;
        }
        run_start = i + 1;
    }
    out
}

/// "summary call 3 ok", "provider calls 4, 9, 12 ok".
fn calls_ok(what: &str, calls: &[usize]) -> String {
    match calls {
        [one] => format!("{what} call {one} ok"),
        _ => {
            let list: Vec<String> = calls.iter().map(usize::to_string).collect();
            format!("{what} calls {} ok", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_come_sooner_by_removing_the_ok_calls_before_them() {
        let ok = |o: &u8| *o == 0;
        let sooner = earlier(Some(&[0, 0, 0, 0, 1, 0, 1]), |o| ok(&o));
        let cut: Vec<(usize, usize, Vec<u8>)> = vec![
            (0, 4, vec![1, 0, 1]),
            (2, 2, vec![0, 0, 1, 0, 1]),
            (3, 1, vec![0, 0, 0, 1, 0, 1]),
            (5, 1, vec![0, 0, 0, 0, 1, 1]),
        ];
        assert_eq!(sooner, cut);
        assert!(earlier(Some(&[0u8, 0]), |o| o == 0).is_empty(), "no fault");
        assert!(
            earlier(Some(&[1u8, 1]), |o| o == 0).is_empty(),
            "nothing before"
        );
        assert!(earlier::<u8>(None, |o| o == 0).is_empty());
    }
}
