//! The chart cut into columns of equal width on the axis — a terminal's character cells or
//! an SVG's pixels — each holding the envelope of what fell in it: for used slots, zombies
//! and the limit the lowest and highest value and the first and last (so a line through a
//! million readings is four points a column and still has every peak), whether any reading
//! was at or over its limit, the cleanups and unread rows. A column without a reading is
//! `Between` two readings of one stretch (drawn as the machine held it: the last value
//! read), in a `Gap`, or `Empty` (before the first reading or after the last: nothing is
//! invented there). Both drawings are made from these columns.

use super::{Chart, Point};

/// Low, high, first and last of one series in one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    pub min: u64,
    pub max: u64,
    pub first: u64,
    pub last: u64,
    /// The lowest came before the highest (the order to draw them in).
    pub min_first: bool,
    min_at: i64,
    max_at: i64,
    first_at: i64,
    last_at: i64,
}

impl Envelope {
    fn new(v: u64, at: i64) -> Self {
        Self {
            min: v,
            max: v,
            first: v,
            last: v,
            min_first: true,
            min_at: at,
            max_at: at,
            first_at: at,
            last_at: at,
        }
    }

    fn add(&mut self, v: u64, at: i64) {
        if v < self.min || (v == self.min && at < self.min_at) {
            (self.min, self.min_at) = (v, at);
        }
        if v > self.max || (v == self.max && at < self.max_at) {
            (self.max, self.max_at) = (v, at);
        }
        if at < self.first_at {
            (self.first, self.first_at) = (v, at);
        }
        if at >= self.last_at {
            (self.last, self.last_at) = (v, at);
        }
        self.min_first = self.min_at <= self.max_at;
    }
}

fn add(e: &mut Option<Envelope>, v: u64, at: i64) {
    match e {
        Some(e) => e.add(v, at),
        None => *e = Some(Envelope::new(v, at)),
    }
}

/// What a column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColumnKind {
    /// One reading or more.
    Readings,
    /// No reading, between two of one stretch: the last value read holds.
    Between,
    /// No reading, inside a gap of the record.
    Gap,
    /// No reading before the first or after the last (a cleanup or an unread row may sit
    /// there): nothing drawn.
    #[default]
    Empty,
}

/// The values a `Between` column holds: the last reading before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub used: u64,
    pub zombies: Option<u64>,
    pub limit: Option<u64>,
    pub source: Option<u16>,
}

/// One column of the axis.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Column {
    /// The times at its edges.
    pub from: i64,
    pub to: i64,
    pub kind: ColumnKind,
    pub readings: u32,
    pub used: Option<Envelope>,
    pub zombies: Option<Envelope>,
    pub limit: Option<Envelope>,
    /// The source of the lowest limit (the one that bound) and of the last.
    pub source: Option<u16>,
    pub last_source: Option<u16>,
    /// A reading at or over its limit fell here (or, between readings, the last one was).
    pub over: bool,
    pub held: Option<Held>,
    pub cleanups: u32,
    pub emergency: u32,
    pub unread: u32,
    /// A gap of the record overlaps the column (however narrow it is drawn).
    pub gap_inside: bool,
    /// The stretch (between gaps) of its first and its last reading.
    pub first_stretch: usize,
    pub last_stretch: usize,
}

impl Column {
    /// The used value to draw: the column's peak, or the one it holds.
    pub fn used_peak(&self) -> Option<u64> {
        match self.kind {
            ColumnKind::Readings => self.used.map(|e| e.max),
            ColumnKind::Between => self.held.map(|h| h.used),
            ColumnKind::Gap | ColumnKind::Empty => None,
        }
    }

    /// The zombies to draw: the column's peak, or the count it holds.
    pub fn zombies_peak(&self) -> Option<u64> {
        match self.kind {
            ColumnKind::Readings => self.zombies.map(|e| e.max),
            ColumnKind::Between => self.held.and_then(|h| h.zombies),
            ColumnKind::Gap | ColumnKind::Empty => None,
        }
    }

    /// The limit in force: the lowest read in the column, or the one held.
    pub fn binding_limit(&self) -> Option<(u64, Option<u16>)> {
        match self.kind {
            ColumnKind::Readings => self.limit.map(|e| (e.min, self.source)),
            ColumnKind::Between => self.held.and_then(|h| Some((h.limit?, h.source))),
            ColumnKind::Gap | ColumnKind::Empty => None,
        }
    }
}

impl Chart {
    /// The axis cut into `n` columns (at least 1).
    pub fn columns(&self, n: usize) -> Vec<Column> {
        let n = n.max(1);
        let edge = |i: usize| self.axis.time_at(i as f64 / n as f64);
        let mut cols: Vec<Column> = (0..n)
            .map(|i| Column {
                from: edge(i),
                to: edge(i + 1),
                ..Column::default()
            })
            .collect();
        for p in &self.points {
            let c = &mut cols[self.column_of(p.at, n)];
            place(c, p, self.axis.stretch(p.at));
        }
        for m in &self.cleanups {
            let c = &mut cols[self.column_of(m.at, n)];
            if m.emergency {
                c.emergency += 1;
            } else {
                c.cleanups += 1;
            }
        }
        for u in &self.unread {
            if let Some(at) = u.at {
                cols[self.column_of(at, n)].unread += 1;
            }
        }
        for g in &self.axis.gaps {
            let (a, b) = (self.column_of(g.from, n), self.column_of(g.to, n));
            // The columns wholly inside, and the ones its ends fall in when it is narrow.
            for c in &mut cols[a..=b] {
                if c.from < g.to && c.to > g.from {
                    c.gap_inside = true;
                }
            }
        }
        self.classify(&mut cols);
        cols
    }

    /// The column (of `n`) that time `at` falls in.
    pub fn column_of(&self, at: i64, n: usize) -> usize {
        let n = n.max(1);
        let x = (self.axis.x(at) * n as f64).floor();
        (x.max(0.0) as usize).min(n - 1)
    }

    /// Readings, between, gap or empty, and what a between column holds.
    fn classify(&self, cols: &mut [Column]) {
        let mut prev: Option<usize> = None;
        // The next reading column to the right of each column.
        let mut next = vec![None; cols.len()];
        let mut right = None;
        for i in (0..cols.len()).rev() {
            next[i] = right;
            if cols[i].readings > 0 {
                right = Some(i);
            }
        }
        for i in 0..cols.len() {
            if cols[i].readings > 0 {
                cols[i].kind = ColumnKind::Readings;
                prev = Some(i);
                continue;
            }
            let bridged = match (prev, next[i]) {
                (Some(p), Some(q)) => cols[p].last_stretch == cols[q].first_stretch,
                _ => false,
            };
            let mid = cols[i].from + (cols[i].to - cols[i].from) / 2;
            if bridged {
                let p = &cols[prev.unwrap_or(i)];
                let held = Held {
                    used: p.used.map_or(0, |e| e.last),
                    zombies: p.zombies.map(|e| e.last),
                    limit: p.limit.map(|e| e.last),
                    source: p.last_source,
                };
                let c = &mut cols[i];
                c.kind = ColumnKind::Between;
                c.over = held.limit.is_some_and(|l| held.used >= l);
                c.held = Some(held);
            } else if self.axis.gap_at(mid).is_some() || cols[i].gap_inside && prev.is_some() {
                cols[i].kind = ColumnKind::Gap;
            }
        }
    }
}

fn place(c: &mut Column, p: &Point, stretch: usize) {
    if c.readings == 0 {
        c.first_stretch = stretch;
    }
    c.last_stretch = c.last_stretch.max(stretch);
    c.readings += 1;
    add(&mut c.used, p.used, p.at);
    if let Some(z) = p.zombies() {
        add(&mut c.zombies, z, p.at);
    }
    if let Some(l) = p.limit() {
        let lower = c.limit.is_none_or(|e| l < e.min);
        let later = c.limit.is_none_or(|e| p.at >= e.last_at);
        add(&mut c.limit, l, p.at);
        if lower {
            c.source = p.source();
        }
        if later {
            c.last_source = p.source();
        }
        if p.used >= l {
            c.over = true;
        }
    }
}
