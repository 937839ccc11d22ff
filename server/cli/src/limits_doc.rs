//! docs/limits.md cannot drift from the code: every bound the page states is
//! read here from the constant (or default) that holds it, rendered as the
//! page writes it, and looked for in the page's text (whitespace folded, so
//! a sentence may wrap anywhere). Changing a bound without the page, or the
//! page without the bound, fails this test.
use seedfall_search as search;
use seedfall_sim as sim;

/// `16 MiB`, `1 GiB`, `16 KiB`, as the page writes sizes.
fn size(bytes: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

/// `100,000`, as the page writes counts.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `2^40` for a large power of two (as the page writes those), else a count.
fn power(n: u64) -> String {
    if n.is_power_of_two() && n > 1 << 16 {
        format!("2^{}", n.trailing_zeros())
    } else {
        count(n)
    }
}

/// A config field's row: `| field | low to high |`.
fn range(field: &str, (lo, hi): (u64, u64)) -> String {
    let show = |n: u64| if n < 10_000 { n.to_string() } else { power(n) };
    format!("| {field} | {} to {} |", show(lo), show(hi))
}

/// What the page says, each bound in the words around it.
fn statements() -> Vec<String> {
    let limits = sim::config::Limits::default();
    let work = |n: u64| n.to_string();
    vec![
        // Memory.
        format!("(at least {})", size(crate::resources::RUN_SHARE_MIN)),
        format!("at most {} snapshots", search::snapshots::client::SNAPSHOTS_KEPT_MAX),
        format!("| one node instance's linear memory | {} | `limits.memory_mb` (at most {}) |", size(limits.memory_bytes_max), sim::config::MEMORY_MB_MAX),
        format!("| one node instance's disk | {} of file data, {} inodes |", size(sim::disk::DISK_BYTES_MAX), count(sim::disk::INODES_MAX as u64)),
        // Host work.
        format!("`limits.watchdog_instructions` (default {})", count(limits.watchdog_instructions)),
        format!("(one virtual nanosecond per instruction by default{}", if limits.ns_per_instruction == 1 { "" } else { "<not 1>" }),
        format!("| any host call | {} |", work(sim::limits::work::HOST_CALL)),
        format!("| each poll subscription (`poll_oneoff` takes at most {}) | {} |", sim::limits::SUBSCRIPTIONS_MAX, work(sim::limits::work::PER_SUBSCRIPTION)),
        format!("| bytes of file and socket data copied | 1 per {} bytes |", sim::limits::work::BYTES_PER_UNIT),
        format!("| bytes of `random_get` | 1 per {} bytes |", sim::limits::work::BYTES_PER_UNIT / sim::limits::work::RANDOM_PER_COPY),
        format!("| entries listed by `fd_readdir` | {} each |", sim::limits::work::PER_DIR_ENTRY),
        format!("| each `memory.grow` or `table.grow`, failed or not | {} (+ 1 per {} table elements) |", count(sim::limits::work::PER_GROW), sim::limits::work::TABLE_ELEMENTS_PER_UNIT),
        format!("`limits.steps_max` scheduler steps ({})", count(limits.steps_max)),
        format!("{} pending timers and network events", count(sim::limits::EVENTS_PENDING_MAX as u64)),
        format!("{} empty wake-ups of one poll", count(u64::from(sim::limits::POLL_REWAITS_MAX))),
        format!("{} wake-ups of one blocking socket call", count(u64::from(sim::limits::BLOCKING_WAITS_MAX))),
        format!(
            "{} distinct properties, {} buggify sites and {} oracle keys per run",
            count(sim::props::PROPERTIES_MAX as u64),
            count(sim::limits::BUGGIFY_SITES_MAX as u64),
            count(sim::limits::ORACLE_KEYS_MAX as u64)
        ),
        format!("{} watermarks of numeric guidance", count(sim::props::WATERMARKS_MAX as u64)),
        format!("each name at most {} bytes", sim::limits::GUIDE_NAME_BYTES_MAX),
        // Virtual time.
        format!("Every duration is at most `{}h`", sim::vtime::DURATION_MAX.nanos() / 3_600_000_000_000),
        format!("Clock skew rates are 1 to {} ppm", count(sim::schedule::SKEW_PPM_MAX)),
        // Output.
        format!("| output kept per node instance and stream (stdout, stderr) | {} |", size(sim::config::OUTPUT_MB_DEFAULT << 20)),
        format!("| one line | {} (a longer line is kept in pieces) |", size(sim::limits::LINE_BYTES_MAX as u64)),
        format!("| events kept in a trace | {} (the rest counted", count(sim::trace::EVENTS_MAX as u64)),
        // Failure folders.
        format!("only the {} shortest failing runs of each finding", search::kept::KEEP_DEFAULT),
        format!("at most {} seeds and {} example messages", count(search::finding::SEEDS_MAX as u64), search::finding::EXAMPLES_MAX),
        format!("`-failures-budget` (default `{}`)", size(crate::resources::FAILURES_BUDGET_DEFAULT).replace(' ', "")),
        format!("The corpus keeps at most {} entries; pins at most {}.", count(search::explore::corpus::ENTRIES_MAX as u64), count(search::pins::PINS_MAX as u64)),
        // Files seedfall reads.
        format!("| a config, schedule file (`-faults`), pin or corpus entry | {}, a regular file", size(sim::files::JSON_BYTES_MAX)),
        format!("| a wasm module | {} |", size(sim::files::MODULE_BYTES_MAX)),
        format!(
            "| a node's seeded disk files together | {}; {} files and {} folders |",
            size(sim::config::SEED_BYTES_MAX),
            sim::config::SEED_FILES_MAX,
            sim::config::SEED_DIRS_MAX
        ),
        format!("| nodes in a config, replicas of a node | {} each |", {
            assert_eq!(sim::config::NODES_MAX as u64, sim::config::REPLICAS_MAX, "the page gives one figure for both");
            sim::config::NODES_MAX
        }),
        format!("| faults in a schedule, branches | {} and {} |", count(sim::schedule::FAULTS_MAX as u64), count(sim::schedule::BRANCHES_MAX as u64)),
        format!("| the values of a config (numbers, strings, keys, lists and objects) | {}, counted", count(sim::files::JSON_VALUES_MAX)),
        format!("| a shard result (`merge`) | {}; its `shard.count` 1 to {}", size(search::shard_result::SHARD_BYTES_MAX), count(u64::from(search::shard::SHARDS_MAX))),
        format!("| shard results in one merge | {} |", count(search::merge::FILES_MAX as u64)),
        format!("| the failures index, read back to merge a sweep into it | {} |", size(search::kept::INDEX_BYTES_MAX)),
        format!("| running sweeps' claims on a workspace (`.seedfall/live/`) | {} files read, {} each |", count(search::kept::CLAIMS_MAX as u64), size(search::kept::CLAIM_BYTES_MAX)),
        // Flags and config fields.
        format!("| seeds in one sweep (`-seeds`) | {} |", count(search::seeds::SEEDS_MAX)),
        format!("| workers (`-j`) | 1 to {} |", search::pool::JOBS_MAX),
        format!("| `-keep-failures` | 1 to {} |", search::kept::KEEP_MAX),
        format!("| exploration rounds (`-rounds`) | 1 to {} |", count(u64::from(search::explore::ROUNDS_MAX))),
        format!("| runs one shrink may spend | {} |", count(search::shrink::SHRINK_RUNS_MAX)),
        format!("| a config's `name` | {} bytes |", sim::config::NAME_BYTES_MAX),
        range("`limits.watchdog_instructions`", sim::config::WATCHDOG_INSTRUCTIONS_RANGE),
        range("`limits.steps_max`", sim::config::STEPS_MAX_RANGE),
        range("`limits.ns_per_instruction`", sim::config::NS_PER_INSTRUCTION_RANGE),
        range("`limits.output_mb`", sim::config::OUTPUT_MB_RANGE),
        range("`limits.run_memory_mb`", sim::config::RUN_MEMORY_MB_RANGE),
        format!("| `disk.sector_bytes` | {} to {}, a power of two |", sim::config::SECTOR_BYTES_RANGE.0, count(sim::config::SECTOR_BYTES_RANGE.1)),
        format!("| `faults.clock_skew.max_ppm` | 1 to {} (default {}) |", count(sim::config::SKEW_MAX_PPM_MAX), count(sim::config::SKEW_MAX_PPM_DEFAULT)),
        format!("| time-based faults one run plans from the config's rates | {} |", count(sim::limits::PLANNED_MAX as u64)),
        // What a guest can hold.
        format!("| open descriptors of one node instance | {} |", sim::limits::FDS_MAX),
        format!("| buffers (iovecs) in one read or write | {} |", sim::limits::IOVS_MAX),
        format!("| bytes one read moves | {} |", size(sim::limits::READ_BYTES_MAX as u64)),
        format!("| a path | {} bytes |", sim::limits::PATH_BYTES_MAX),
        format!("| a file name, and folders deep | {} bytes, {} |", sim::disk::NAME_BYTES_MAX, sim::disk::PATH_DEPTH_MAX),
        format!("| memory mappings of one node instance | {} |", sim::limits::MAPPINGS_MAX),
        format!("| files locked at once in a run | {} |", count(sim::limits::LOCKED_FILES_MAX as u64)),
        format!("| sockets alive in a run (every node together) | {} |", count(sim::net::SOCKETS_MAX as u64)),
        format!("| a listener's backlog | {} |", sim::net::BACKLOG_MAX),
        format!("| bytes a connection holds unread or in flight per direction | {} |", size(sim::net::WINDOW_BYTES as u64)),
        format!("| bytes of one `random_get` | {} |", size(u64::from(sim::limits::RANDOM_BYTES_MAX))),
        format!("| a node's table | {} elements |", power(sim::limits::TABLE_ELEMENTS_MAX as u64)),
        format!("| a property's message, and its location | {} bytes |", sim::limits::PROPERTY_TEXT_BYTES_MAX),
        format!("| a property's details | {} |", size(sim::props::DETAILS_BYTES_MAX as u64)),
        format!("| a buggify site's name | {} bytes |", sim::limits::BUGGIFY_SITE_BYTES_MAX),
        format!("| an oracle key, and its value | {} bytes, {} |", sim::limits::ORACLE_KEY_BYTES_MAX, size(sim::limits::ORACLE_VALUE_BYTES_MAX as u64)),
        // The editor's daemon.
        format!("reads messages of at most {}", size(seedfall_lsp::wire::FRAME_BYTES_MAX as u64)),
        format!("runs at most {} jobs at once", seedfall_lsp::jobs::JOBS_MAX),
        format!("looks at {} configs of a workspace and {} failure folders of each", seedfall_lsp::state::CONFIGS_MAX, seedfall_lsp::state::FAILURES_MAX),
        // The MCP server.
        format!("a request line over {} with `-32700`", size(seedfall_lsp::mcp::gate::LINE_BYTES_MAX)),
    ]
}

#[test]
fn every_bound_on_the_limits_page_is_the_codes() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/limits.md")).expect("docs/limits.md");
    let folded = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let missing: Vec<String> = statements().into_iter().filter(|s| !folded.contains(s.as_str())).collect();
    assert!(missing.is_empty(), "docs/limits.md does not say, as the code has it:\n  {}", missing.join("\n  "));
}

#[test]
fn sizes_and_counts_render_as_the_page_writes_them() {
    assert_eq!((size(16 << 20), size(1 << 30), size(16 << 10), size(100)), ("16 MiB".into(), "1 GiB".into(), "16 KiB".into(), "100 bytes".into()));
    assert_eq!((count(64), count(4096), count(100_000), count(2_000_000_000)), ("64".into(), "4,096".into(), "100,000".into(), "2,000,000,000".into()));
    assert_eq!((power(1 << 40), power(65_536)), ("2^40".into(), "65,536".into()));
    assert_eq!(range("`x`", (10_000, 1 << 50)), "| `x` | 10,000 to 2^50 |");
}
