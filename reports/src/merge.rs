//! Joining the reports of `run --shard K/N` (K = 0..N) into the report of the whole run:
//! the case rows in case order and the summary re-aggregated, so the result is the
//! unsharded run's report except for the header, whose `shard` parameter becomes
//! `shards = N`.

use crate::aggregate::Aggregator;
use crate::schema::{Header, Report, SCHEMA_VERSION};
use std::collections::BTreeMap;

/// Header parameter a sharded run writes (`K/N`).
pub const SHARD_PARAM: &str = "shard";
/// Header parameter of a merged report: the number of shards joined.
pub const SHARDS_PARAM: &str = "shards";
/// Most shards one merge joins.
pub const SHARDS_MAX: u32 = 4_096;

/// One shard's report and where it came from (for messages).
pub struct ShardReport {
    pub source: String,
    pub report: Report,
}

/// (index, count) of a sharded run's header (its `K/N` shard parameter).
pub fn shard_of(header: &Header) -> Option<(u32, u32)> {
    let (k, n) = header.params.get(SHARD_PARAM)?.split_once('/')?;
    let (k, n): (u32, u32) = (k.parse().ok()?, n.parse().ok()?);
    (k < n && n <= SHARDS_MAX).then_some((k, n))
}

/// The header with its shard parameter removed: what every shard of one run shares.
fn run_identity(header: &Header) -> Header {
    let mut h = header.clone();
    h.params.remove(SHARD_PARAM);
    h
}

/// (first case, number of cases) of shard `k` of `n` over `cases` (as `run --shard`).
pub fn shard_range(cases: u32, k: u32, n: u32) -> (u32, u32) {
    let lo = (cases as u64 * k as u64 / n as u64) as u32;
    let hi = (cases as u64 * (k as u64 + 1) / n as u64) as u32;
    (lo, hi - lo)
}

/// Joins `shards` (any order) into one report, or says why they are not the shards of
/// one run: a report without a shard, shards of different runs (seed, cases, passes,
/// strategy, bugs, parameters, version), a shard missing or given twice, or case rows
/// that are not the shard's slice.
pub fn merge_reports(shards: Vec<ShardReport>) -> Result<Report, String> {
    let first = shards.first().ok_or("no shard reports to merge")?;
    let first_source = first.source.clone();
    let identity = run_identity(&first.report.header);
    let count = shard_of(&first.report.header)
        .ok_or_else(|| not_sharded(&first.source))?
        .1;
    let first_header = first.report.header.clone();
    let mut by_index: BTreeMap<u32, ShardReport> = BTreeMap::new();
    for shard in shards {
        let header = &shard.report.header;
        let (k, n) = shard_of(header).ok_or_else(|| not_sharded(&shard.source))?;
        if n != count || run_identity(header) != identity {
            return Err(format!(
                "{}: shard of a different run ({}) than {first_source} ({})",
                shard.source,
                describe(header),
                describe(&first_header)
            ));
        }
        check_rows(&shard, identity.cases, k, n)?;
        if let Some(other) = by_index.insert(k, shard) {
            return Err(format!(
                "shard {k}/{n} given twice (again in {})",
                other.source
            ));
        }
    }
    if let Some(missing) = (0..count).find(|k| !by_index.contains_key(k)) {
        return Err(format!("shard {missing}/{count} is missing"));
    }
    let mut agg = Aggregator::new();
    let mut cases = Vec::new();
    for shard in by_index.into_values() {
        agg.merge(Aggregator::from_summary(shard.report.summary));
        cases.extend(shard.report.cases);
    }
    let mut header = identity;
    header
        .params
        .insert(SHARDS_PARAM.to_string(), count.to_string());
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        header,
        cases,
        summary: agg.into_summary(),
    })
}

fn not_sharded(source: &str) -> String {
    format!("{source}: not a sharded run (no `{SHARD_PARAM}` in its header)")
}

fn describe(h: &Header) -> String {
    let shard = h.params.get(SHARD_PARAM).map_or("-", String::as_str);
    format!(
        "version {}, seed {}, cases {}, passes {}, strategy {}, bugs [{}], shard {}",
        h.version,
        h.seed,
        h.cases,
        h.passes,
        h.strategy,
        h.bugs.join(","),
        shard
    )
}

/// The shard's rows are exactly its slice of the case range, in order.
fn check_rows(shard: &ShardReport, cases: u32, k: u32, n: u32) -> Result<(), String> {
    let (lo, len) = shard_range(cases, k, n);
    let ids: Vec<u32> = shard.report.cases.iter().map(|r| r.case).collect();
    let expected: Vec<u32> = (lo..lo + len).collect();
    if ids != expected || shard.report.summary.totals.cases != len as u64 {
        return Err(format!(
            "{}: shard {k}/{n} should hold cases {lo}..{} but holds {} rows",
            shard.source,
            lo + len,
            ids.len()
        ));
    }
    Ok(())
}
