//! The report as text: a header saying what was measured and how, the classic test's lines for
//! each source, one aligned table of every source's rows, and the verdicts (partial cells,
//! verification, whether the sources hold the same bytes).

use std::fmt;
use std::time::Duration;

use comfy_table::{presets, CellAlignment, ColumnConstraint, Table};

use crate::plan::{shape_name, ReaderKind};
use crate::report::{per_second, Report, Row, SourceReport};
use crate::timing::Latency;
use crate::units::{binary_size, ratio, seconds, short_duration, significant, wrap};
use crate::verdict::Verdict;
use crate::workload::Pattern;

/// The width the text report fits by default, in characters.
pub(crate) const WIDTH: usize = 120;

impl fmt::Display for Report {
    /// The report as text, in at most 120 columns (`WIDTH`): the table leaves out the columns
    /// that do not fit, and says which. The alternate form (`{:#}`, `--wide` on the command line)
    /// prints every column, however wide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wide = f.alternate();
        self.header(f)?;
        writeln!(f)?;
        for source in &self.sources {
            write!(
                f,
                "{}: {}, {} bytes ({})",
                source.name,
                source.label,
                source.file_len,
                binary_size(source.file_len)
            )?;
            if source.limit.complete {
                write!(f, ", checksum {:#018x}", source.limit.checksum)?;
            }
            writeln!(f)?;
            if let Some(write) = &source.write {
                let detail = format!("({} writes of {} bytes)", write.writes, write.buffer_size);
                paragraph(f, &format!("{write} {detail}"), "  ", "    ")?;
            }
            for limit in source.limit_rows() {
                writeln!(f, "  {limit}")?;
            }
        }
        writeln!(f)?;
        let left_out = self.table(f, if wide { usize::MAX } else { WIDTH })?;
        writeln!(f)?;
        self.legend(f, &left_out)?;
        writeln!(f)?;
        self.checks(f)?;
        self.conclusions(f)
    }
}

/// `text` as word-wrapped lines of at most [`WIDTH`] characters.
fn paragraph(f: &mut fmt::Formatter<'_>, text: &str, first: &str, rest: &str) -> fmt::Result {
    for line in wrap(text, first, rest, WIDTH) {
        writeln!(f, "{line}")?;
    }
    Ok(())
}

/// The columns of the table; `pattern` and `tasks` only when the run varies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Source,
    Reader,
    Pattern,
    Tasks,
    Request,
    Window,
    Bytes,
    Seconds,
    MbPerSecond,
    RequestsPerSecond,
    P50,
    P99,
    SourceReads,
    SourceSeeks,
    DiskHits,
    FetchedPerUsed,
    VsLimit,
    VsBuffered,
    Note,
}

impl Column {
    /// The columns the default (narrow) table leaves out first, in order, until it fits.
    const NARROWING: &'static [Column] = &[
        Column::Bytes,
        Column::Seconds,
        Column::SourceSeeks,
        Column::RequestsPerSecond,
        Column::P50,
        Column::SourceReads,
        Column::P99,
        Column::FetchedPerUsed,
        Column::DiskHits,
    ];

    fn title(self) -> &'static str {
        match self {
            Column::Source => "source",
            Column::Reader => "reader",
            Column::Pattern => "pattern",
            Column::Tasks => "tasks",
            Column::Request => "request",
            Column::Window => "window",
            Column::Bytes => "bytes read",
            Column::Seconds => "seconds",
            Column::MbPerSecond => "MB/s",
            Column::RequestsPerSecond => "requests/s",
            Column::P50 => "p50",
            Column::P99 => "p99",
            Column::SourceReads => "src reads",
            Column::SourceSeeks => "src seeks",
            Column::DiskHits => "disk hits",
            Column::FetchedPerUsed => "fetched/used",
            Column::VsLimit => "vs limit",
            Column::VsBuffered => "vs buffered",
            Column::Note => "",
        }
    }

    /// Names and notes are aligned left, numbers right.
    fn left(self) -> bool {
        matches!(
            self,
            Column::Source | Column::Reader | Column::Pattern | Column::Note
        )
    }
}

impl Report {
    /// What was measured, the units and how.
    fn header(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells = || self.sources.iter().flat_map(|s| &s.cells);
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut tasks: Vec<usize> = Vec::new();
        for r in cells() {
            if !patterns.contains(&r.cell.pattern) {
                patterns.push(r.cell.pattern);
            }
            if !tasks.contains(&r.cell.tasks) {
                tasks.push(r.cell.tasks);
            }
        }
        let sources = match self.sources.len() {
            1 => "1 source".to_string(),
            n => format!("{n} sources"),
        };
        let patterns = if patterns.is_empty() {
            "no reader cells".to_string()
        } else {
            let names: Vec<String> = patterns.iter().map(ToString::to_string).collect();
            format!("{} reads", names.join(", "))
        };
        let tasks = match tasks.as_slice() {
            [] | [1] => "1 task".to_string(),
            [n] => format!("{n} concurrent tasks"),
            many => {
                let many: Vec<String> = many.iter().map(ToString::to_string).collect();
                format!("{} concurrent tasks", many.join(", "))
            }
        };
        let passes = if self.repetitions == 1 {
            "1 pass per cell".to_string()
        } else {
            format!("{} passes per cell", self.repetitions)
        };
        paragraph(
            f,
            &format!(
                "Throughput of {sources}: {patterns}, {tasks}, {passes}, {}.",
                self.budgets_summary()
            ),
            "",
            "  ",
        )
    }

    /// What every row and column means: a line per reader in the table, then the units, the
    /// latencies, the patterns' seed, and the columns left out for width (`left_out`).
    fn legend(&self, f: &mut fmt::Formatter<'_>, left_out: &[Column]) -> fmt::Result {
        let cells = || self.sources.iter().flat_map(|s| &s.cells);
        writeln!(f, "Readers:")?;
        let mut rows: Vec<(&str, String)> = Vec::new();
        if let Some(write) = self.sources.iter().find_map(|s| s.write.as_ref()) {
            rows.push((
                "write",
                format!(
                    "the file written first, in writes of {} bytes (not a read)",
                    write.buffer_size
                ),
            ));
        }
        let rounds = self
            .sources
            .iter()
            .flat_map(|s| s.limit_rows())
            .map(|l| l.rounds)
            .max()
            .filter(|&n| n > 1)
            .map_or_else(String::new, |n| {
                format!(
                    "; timed again, whole, until a time floor had passed (up to {n} rounds): \
                     the row shows the median round, as does the stream row"
                )
            });
        let streams = self.sources.iter().any(|s| s.stream.is_some());
        let baseline = if streams {
            ""
        } else {
            ": the baseline of \"vs limit\" (no source has a streaming call, so no stream row)"
        };
        rows.push((
            "limit",
            format!(
                "one pass of 1 MiB reads straight from the source, one at a time (like dd \
                 bs=1M){rounds}{baseline}"
            ),
        ));
        if streams {
            let without: Vec<&str> = self
                .sources
                .iter()
                .filter(|s| s.stream.is_none())
                .map(|s| s.name.as_str())
                .collect();
            let without = if without.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} {} no streaming call (NFS READs, a simulated link's requests, \
                     O_DIRECT reads): {} limit is the limit row",
                    without.join(", "),
                    if without.len() == 1 { "has" } else { "have" },
                    if without.len() == 1 { "its" } else { "their" },
                )
            };
            rows.push((
                "stream",
                format!(
                    "one streaming read of the whole file through the source's own streaming \
                     call, read to its end (a file: tokio File reads of up to {}; HTTP, S3: \
                     object_store's get stream; FTP, WebDAV: OpenDAL's bytes stream){without}. \
                     The faster of limit and stream is the source's limit: the baseline of \
                     \"vs limit\" and of the verdict",
                    binary_size(crate::stream::STREAM_BUFFER as u64)
                ),
            ));
        }
        let mut kinds: Vec<ReaderKind> = Vec::new();
        for r in cells() {
            if !kinds.contains(&r.cell.reader) {
                kinds.push(r.cell.reader);
            }
        }
        for kind in kinds {
            rows.push((kind.name(), self.describe(kind)));
        }
        let name_width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, text) in &rows {
            let first = format!("  {name:<name_width$}  ");
            let rest = " ".repeat(first.len());
            paragraph(f, text, &first, &rest)?;
        }
        paragraph(
            f,
            "Columns: MB/s = 10^6 bytes/s. \"vs limit\" = MB/s / the source's limit row or stream \
             row, whichever is faster. \
             \"vs buffered\" = MB/s / AsyncBufferedInput's at the same request size and window \
             (its first window for readers without one). \"fetched/used\" = bytes the source \
             returned / bytes the requests asked for. Ratios below 0.001 print as 1/N x. \
             \"src reads\" = reads that reached the source; \"src seeks\" = those that did not \
             continue the previous one.",
            "",
            "  ",
        )?;
        paragraph(
            f,
            "p50, p99: latency per request, of requests sampled at random (about one per 100 µs \
             of running time). The timed passes only look at each request (its first and last \
             byte); every row is then read again, untimed, and every byte compared with the \
             file.",
            "",
            "  ",
        )?;
        if cells().any(|r| r.cell.pattern.is_random()) {
            paragraph(
                f,
                &format!(
                    "Random, clustered and term-lookup passes: requests at offsets drawn from \
                     seed {}; a pass makes as many requests as read the file once, at most \
                     10000, unless set.",
                    self.seed
                ),
                "",
                "  ",
            )?;
        }
        if cells().any(|r| matches!(r.cell.pattern, Pattern::Terms { .. })) {
            paragraph(
                f,
                &format!(
                    "Term lookups: each request reads at a random offset in one of the file's {} \
                     regions, picked by a Zipf-skewed rank (hot regions scattered over the \
                     file); each task seeks, then reads.",
                    binary_size(Pattern::TERMS_REGION)
                ),
                "",
                "  ",
            )?;
        }
        if !left_out.is_empty() {
            let titles: Vec<&str> = left_out.iter().map(|c| c.title()).collect();
            paragraph(
                f,
                &format!(
                    "Not shown to fit {WIDTH} columns: {} (--wide shows every column).",
                    titles.join(", ")
                ),
                "",
                "  ",
            )?;
        }
        Ok(())
    }

    /// The legend of one reader.
    fn describe(&self, kind: ReaderKind) -> String {
        let cells = || self.sources.iter().flat_map(|s| &s.cells);
        match kind {
            ReaderKind::Buffered => "this crate's AsyncBufferedInput over the source's stream, \
                one read_bytes per request; \"window\" is its buffer"
                .to_string(),
            ReaderKind::BufferedReadAhead => {
                let shape = match self.read_aheads.as_slice() {
                    [ahead] => format!(
                        " (chunks of up to {}, up to {} at a time)",
                        binary_size(ahead.chunk_size() as u64),
                        ahead.depth()
                    ),
                    shapes => {
                        let names: Vec<String> = shapes.iter().map(|&s| shape_name(s)).collect();
                        format!(
                            " of each shape: {} (CHUNKxDEPTH chunks in flight; a row names its \
                             shape unless adaptive)",
                            names.join(", ")
                        )
                    }
                };
                format!(
                    "AsyncBufferedInput over the source's positional reads with read-ahead{shape}; \
                     its src reads are the requests that reach the positional source"
                )
            }
            ReaderKind::Cached => {
                let capacity = cells()
                    .find_map(|r| r.cache_capacity)
                    .map_or_else(String::new, |c| format!(" of {}", binary_size(c)));
                let disk = if cells().any(|r| r.disk_hits.is_some()) {
                    "; \"disk hits\" are the blocks its --disk-cache tier served (the tier is \
                     kept across runs)"
                } else {
                    ""
                };
                format!(
                    "AsyncBufferedInput over the source's positional reads, without read-ahead, \
                     through one block cache{capacity} per cell shared by its tasks, in blocks \
                     of the window's size, fresh in every cell: its src reads are the block \
                     loads that reach the source. The first pass of a cell is cold; with \
                     --repeat N the later ones are warm{disk}"
                )
            }
            ReaderKind::BufReader => {
                "tokio's BufReader with the window's capacity, one read_exact per request".into()
            }
            ReaderKind::Unbuffered => "the bare source, one read_exact per request: every \
                request is at least one source read (no window)"
                .into(),
            ReaderKind::ByteLoop => "tokio's BufReader with the window's capacity, each request \
                read as one read_u8 per byte (Lucene's readBytes before LUCENE-695)"
                .into(),
            ReaderKind::OpendalReader => "OpenDAL's own reader with its default options \
                (reader_with, into_futures_async_read, a seek where a request jumps, \
                read_exact); its source reads are not known (0)"
                .into(),
            ReaderKind::OpendalReaderTuned => "OpenDAL's own reader with the concurrent and \
                chunk options of the URL's query; its source reads are not known (0)"
                .into(),
            ReaderKind::ObjectStoreBufReader => "the object_store crate's own BufReader with \
                the window's capacity, a seek where a request jumps, read_exact; its source \
                reads are not known (0)"
                .into(),
        }
    }

    /// `no time budget`, `time budget 2s per cell`, or `time budget per cell: 10s, 2s for byte
    /// loop and unbuffered`.
    fn budgets_summary(&self) -> String {
        let show = |b: Option<Duration>| b.map_or_else(|| "none".to_string(), |b| format!("{b:?}"));
        // Each reader's budget, in the order readers first appear.
        let mut budgets: Vec<(&str, Option<Duration>)> = Vec::new();
        for r in self.sources.iter().flat_map(|s| &s.cells) {
            if !budgets.iter().any(|(k, _)| *k == r.cell.reader.name()) {
                budgets.push((r.cell.reader.name(), r.budget));
            }
        }
        if budgets.is_empty() {
            if let Some(source) = self.sources.first() {
                budgets.push(("limit", source.limit.budget));
            }
        }
        let Some(&(_, first)) = budgets.first() else {
            return "no time budget".to_string();
        };
        if budgets.iter().all(|&(_, b)| b == first) {
            return match first {
                Some(b) => format!("time budget {b:?} per cell"),
                None => "no time budget".to_string(),
            };
        }
        // The first reader's budget (AsyncBufferedInput's, usually), then the others'.
        let mut parts = vec![show(first)];
        let mut others: Vec<Option<Duration>> = Vec::new();
        for &(_, b) in &budgets {
            if b != first && !others.contains(&b) {
                others.push(b);
            }
        }
        for b in others {
            let names: Vec<&str> = budgets
                .iter()
                .filter(|(_, o)| *o == b)
                .map(|(k, _)| *k)
                .collect();
            parts.push(format!("{} for {}", show(b), names.join(" and ")));
        }
        format!("time budget per cell: {}", parts.join(", "))
    }

    /// The aligned table: per source, its write and limit rows, then its cells grouped by
    /// pattern, tasks and request size, a blank line between groups and between sources. Leaves
    /// out columns, in [`Column::NARROWING`]'s order, until it fits `width`; returns those.
    fn table(&self, f: &mut fmt::Formatter<'_>, width: usize) -> Result<Vec<Column>, fmt::Error> {
        let cells = || self.sources.iter().flat_map(|s| &s.cells);
        let varied_patterns = cells().any(|r| r.cell.pattern != Pattern::Sequential);
        let varied_tasks = cells().any(|r| r.cell.tasks != 1);
        let columns: Vec<Column> = [
            Column::Source,
            Column::Reader,
            Column::Pattern,
            Column::Tasks,
            Column::Request,
            Column::Window,
            Column::Bytes,
            Column::Seconds,
            Column::MbPerSecond,
            Column::RequestsPerSecond,
            Column::P50,
            Column::P99,
            Column::SourceReads,
            Column::SourceSeeks,
            Column::DiskHits,
            Column::FetchedPerUsed,
            Column::VsLimit,
            Column::VsBuffered,
            Column::Note,
        ]
        .into_iter()
        .filter(|c| match c {
            Column::Pattern => varied_patterns,
            Column::Tasks => varied_tasks,
            Column::DiskHits => cells().any(|r| r.disk_hits.is_some()),
            _ => true,
        })
        .collect();

        let mut table = Table::new();
        table
            .load_preset(presets::NOTHING)
            .set_header(columns.iter().map(|c| c.title()));
        let blank = vec![""; columns.len()];
        for (i, source) in self.sources.iter().enumerate() {
            if i > 0 {
                table.add_row(blank.clone());
            }
            if let Some(write) = &source.write {
                table.add_row(row(source, Row::Write(write), &columns));
            }
            for limit in source.limit_rows() {
                table.add_row(row(source, Row::Limit(limit), &columns));
            }
            let mut group = None;
            for r in &source.cells {
                let this = (r.cell.pattern, r.cell.tasks, r.cell.read_size);
                if group != Some(this) {
                    table.add_row(blank.clone());
                    group = Some(this);
                }
                table.add_row(row(source, Row::Read(r), &columns));
            }
        }
        // Two spaces after each column (trimmed at the end of a line); numbers aligned right.
        for (column, kind) in table.column_iter_mut().zip(&columns) {
            column.set_padding((0, 2));
            if !kind.left() {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        let fits = |table: &Table| table.lines().all(|l| l.trim_end().chars().count() <= width);
        let mut left_out = Vec::new();
        for column in Column::NARROWING {
            if fits(&table) {
                break;
            }
            if let Some(i) = columns.iter().position(|c| c == column) {
                let hide = table.column_mut(i).expect("a column per title");
                hide.set_constraint(ColumnConstraint::Hidden);
                left_out.push(*column);
            }
        }
        writeln!(f, "{}", table.trim_fmt())?;
        Ok(left_out)
    }

    /// The verdict: per source, the best of this crate's readers at the smallest and the
    /// largest request size, against the limit and against tokio's `BufReader`.
    fn conclusions(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdicts: Vec<(&SourceReport, Verdict<'_>)> = self
            .sources
            .iter()
            .flat_map(|s| s.verdicts().into_iter().map(move |v| (s, v)))
            .collect();
        if verdicts.is_empty() {
            return Ok(());
        }
        let varied = verdicts
            .iter()
            .any(|(_, v)| v.pattern != Pattern::Sequential || v.tasks != 1);
        writeln!(
            f,
            "\nVerdict: the best AsyncBufferedInput row at the smallest and the largest request \
             size, against the faster limit row:"
        )?;
        for (source, v) in verdicts {
            let mut what = source.name.clone();
            if varied {
                what.push_str(&format!(", {}, {} task", v.pattern.id(), v.tasks));
                if v.tasks != 1 {
                    what.push('s');
                }
            }
            let text = match v.best {
                None => format!(
                    "{what}, {} requests: no AsyncBufferedInput row read right.",
                    binary_size(v.read_size as u64)
                ),
                Some(best) => {
                    let window = best.cell.capacity.map_or_else(String::new, |c| {
                        format!(" ({} window)", binary_size(c as u64))
                    });
                    let limit = source
                        .ratio_to_limit(best)
                        .filter(|_| source.limit_complete())
                        .map_or_else(
                            || "limit not measured".into(),
                            |x| format!("{} the limit", ratio(x)),
                        );
                    let tokio = v.ratio_to_buf_reader().map_or_else(
                        || "no tokio BufReader row".into(),
                        |x| format!("{} tokio BufReader", ratio(x)),
                    );
                    let object_store = v.ratio_to_object_store().map_or_else(String::new, |x| {
                        format!(", {} object_store BufReader", ratio(x))
                    });
                    let shapes = v
                        .adaptive_to_fixed()
                        .map_or_else(String::new, |(x, fixed)| {
                            let shape = fixed.cell.read_ahead.map(shape_name).unwrap_or_default();
                            format!(
                                " Read-ahead: adaptive at {} the best fixed shape ({shape}).",
                                ratio(x)
                            )
                        });
                    format!(
                        "{what}, {} requests: {}{window} {} MB/s: {limit}, {tokio}\
                         {object_store}.{shapes}",
                        binary_size(v.read_size as u64),
                        best.cell.reader_label(),
                        significant(best.mb_per_second(), 3),
                    )
                }
            };
            paragraph(f, &text, "  ", "      ")?;
        }
        Ok(())
    }

    /// Partial rows, the verification verdict, and whether the sources hold the same bytes.
    fn checks(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: usize = self
            .sources
            .iter()
            .map(|s| s.cells.len() + s.limit_rows().count())
            .sum();
        let partial: usize = self
            .sources
            .iter()
            .map(|s| {
                s.cells.iter().filter(|r| !r.complete).count()
                    + s.limit_rows().filter(|l| !l.complete).count()
            })
            .sum();
        if partial > 0 {
            paragraph(
                f,
                &format!(
                    "partial: {partial} of {rows} rows ran out of time before making all their \
                     requests {} time(s); their figures cover what they read, and their \
                     verification the same requests.",
                    self.repetitions
                ),
                "",
                "  ",
            )?;
        }
        let failures = self.failures();
        if !failures.is_empty() {
            writeln!(
                f,
                "FAILED: {} of {rows} rows could not be measured or verified:",
                failures.len()
            )?;
            for (source, r) in &failures {
                let error = r.error.as_deref().unwrap_or_default();
                writeln!(f, "  {} {}: {error}", source.name, r.cell)?;
            }
        }
        if self.verified() {
            let cells: usize = self
                .sources
                .iter()
                .map(|s| s.cells.iter().filter(|r| r.error.is_none()).count())
                .sum();
            let limits: usize = self.sources.iter().map(|s| s.limit_rows().count()).sum();
            paragraph(
                f,
                &format!(
                    "verified: {cells} cell{} and {limits} limit row{} read the file's bytes: \
                     each read again untimed, every byte compared with {}.",
                    if cells == 1 { "" } else { "s" },
                    if limits == 1 { "" } else { "s" },
                    self.truths()
                ),
                "",
                "  ",
            )?;
        } else {
            writeln!(
                f,
                "MISMATCH: rows that read other bytes than the file holds:"
            )?;
            for source in &self.sources {
                for limit in source.limit_rows() {
                    if let Some(m) = &limit.mismatch {
                        writeln!(f, "  {} {}: {m}", source.name, limit.method.id())?;
                    }
                }
                for r in source.mismatches() {
                    if let Some(m) = &r.mismatch {
                        writeln!(f, "  {} {}: {m}", source.name, r.cell)?;
                    }
                }
            }
        }
        match self.sources_agree() {
            Some(true) => writeln!(
                f,
                "sources: all {} hold the same bytes ({:#018x}).",
                self.sources.len(),
                self.sources[0].limit.checksum
            ),
            Some(false) => {
                let sums: Vec<String> = self
                    .sources
                    .iter()
                    .filter(|s| s.limit.complete)
                    .map(|s| format!("{} {:#018x}", s.name, s.limit.checksum))
                    .collect();
                writeln!(f, "sources: the files differ: {}.", sums.join(", "))
            }
            None => Ok(()),
        }
    }

    /// What the verification passes compared with: the pattern, the sources, or both.
    fn truths(&self) -> &'static str {
        let pattern = self
            .sources
            .iter()
            .filter(|s| s.limit.holds_pattern)
            .count();
        if pattern == self.sources.len() {
            "the harness's pattern, which the file holds"
        } else if pattern == 0 {
            "the source read straight"
        } else {
            "the harness's pattern where the file holds it, the source read straight elsewhere"
        }
    }
}

/// One row of the table, with the cells of `columns`.
fn row(source: &SourceReport, row: Row<'_>, columns: &[Column]) -> Vec<String> {
    let dash = || "-".to_string();
    let ratio = |x: Option<f64>| x.map_or_else(dash, ratio);
    let latency = |l: Option<Latency>, p99: bool| {
        l.map_or_else(dash, |l| short_duration(if p99 { l.p99 } else { l.p50 }))
    };
    let failed = matches!(row, Row::Read(r) if r.error.is_some());
    columns
        .iter()
        .map(|column| match (row, column) {
            (_, Column::Source) => source.name.clone(),
            // A failed cell has no figures to show.
            (
                Row::Read(_),
                Column::Bytes
                | Column::Seconds
                | Column::MbPerSecond
                | Column::RequestsPerSecond
                | Column::P50
                | Column::P99
                | Column::SourceReads
                | Column::SourceSeeks
                | Column::DiskHits
                | Column::FetchedPerUsed
                | Column::VsLimit
                | Column::VsBuffered,
            ) if failed => dash(),
            (Row::Write(_), Column::Reader) => "write".into(),
            (Row::Limit(l), Column::Reader) => l.method.id().into(),
            (Row::Read(r), Column::Reader) => r.cell.reader_label(),
            (Row::Read(r), Column::Pattern) => r.cell.pattern.id(),
            (Row::Limit(_), Column::Pattern) => "seq".into(),
            (Row::Read(r), Column::Tasks) => r.cell.tasks.to_string(),
            (Row::Limit(_), Column::Tasks) => "1".into(),
            (Row::Write(w), Column::Request) => w.buffer_size.to_string(),
            (Row::Limit(l), Column::Request) => l.read_size.to_string(),
            (Row::Read(r), Column::Request) => r.cell.read_size.to_string(),
            (Row::Read(r), Column::Window) => r.cell.capacity.map_or_else(dash, |c| c.to_string()),
            (Row::Write(w), Column::Bytes) => w.bytes.to_string(),
            (Row::Limit(l), Column::Bytes) => l.bytes.to_string(),
            (Row::Read(r), Column::Bytes) => r.bytes.to_string(),
            (Row::Write(w), Column::Seconds) => seconds(w.seconds()),
            (Row::Limit(l), Column::Seconds) => seconds(l.seconds()),
            (Row::Read(r), Column::Seconds) => seconds(r.seconds()),
            (Row::Write(w), Column::MbPerSecond) => significant(w.mb_per_second(), 3),
            (Row::Limit(l), Column::MbPerSecond) => significant(l.mb_per_second(), 3),
            (Row::Read(r), Column::MbPerSecond) => significant(r.mb_per_second(), 3),
            (Row::Write(w), Column::RequestsPerSecond) => {
                significant(per_second(w.writes, w.elapsed).round(), 1)
            }
            (Row::Limit(l), Column::RequestsPerSecond) => {
                significant(l.requests_per_second().round(), 1)
            }
            (Row::Read(r), Column::RequestsPerSecond) => {
                significant(r.requests_per_second().round(), 1)
            }
            (Row::Limit(l), Column::P50) => latency(l.latency, false),
            (Row::Limit(l), Column::P99) => latency(l.latency, true),
            (Row::Read(r), Column::P50) => latency(r.latency, false),
            (Row::Read(r), Column::P99) => latency(r.latency, true),
            (Row::Limit(l), Column::SourceReads) => l.underlying_reads.to_string(),
            // Readers whose requests the harness cannot count show none.
            (Row::Read(r), Column::SourceReads | Column::SourceSeeks)
                if !r.cell.reader.counts_source() =>
            {
                dash()
            }
            (Row::Read(r), Column::SourceReads) => r.underlying_reads.to_string(),
            (Row::Read(r), Column::SourceSeeks) => r.underlying_seeks.to_string(),
            (Row::Read(r), Column::DiskHits) => r.disk_hits.map_or_else(dash, |n| n.to_string()),
            (Row::Read(r), Column::FetchedPerUsed) => ratio(r.fetched_per_used()),
            (Row::Limit(l), Column::VsLimit) => ratio(source.ratio_of_limit_row(l)),
            (Row::Read(r), Column::VsLimit) => ratio(source.ratio_to_limit(r)),
            (Row::Read(r), Column::VsBuffered) => ratio(source.ratio_to_buffered(r)),
            (Row::Limit(l), Column::Note) => note(l.complete, l.mismatch.is_some()),
            (Row::Read(r), Column::Note) if r.error.is_some() => "FAILED".into(),
            (Row::Read(r), Column::Note) => note(r.complete, r.mismatch.is_some()),
            (Row::Write(_), Column::Note) => String::new(),
            _ => dash(),
        })
        .collect()
}

fn note(complete: bool, mismatch: bool) -> String {
    match (complete, mismatch) {
        (true, false) => String::new(),
        (false, false) => "partial".into(),
        (true, true) => "MISMATCH".into(),
        (false, true) => "partial, MISMATCH".into(),
    }
}
