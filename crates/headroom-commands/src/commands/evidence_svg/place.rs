//! Where a label can go without covering a line, a marker or another label: what has been
//! drawn is kept per pixel column as the vertical stretches it covers, and a label's box
//! is tried at a few places near its anchor until one is free. A label with no free place
//! is left out (and counted); what it would have said is in the legend panel too.

/// A label's box: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Box2 {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) x1: f64,
    pub(super) y1: f64,
}

/// What is drawn, column by column.
#[derive(Debug)]
pub(super) struct Occupied {
    left: f64,
    cols: Vec<Vec<(f64, f64)>>,
    /// The area labels must stay in.
    bounds: Box2,
}

impl Occupied {
    pub(super) fn new(bounds: Box2) -> Self {
        let n = (bounds.x1 - bounds.x0).ceil().max(1.0) as usize + 1;
        Self {
            left: bounds.x0,
            cols: vec![Vec::new(); n],
            bounds,
        }
    }

    fn index(&self, x: f64) -> Option<usize> {
        let i = (x - self.left).floor();
        (i >= 0.0 && (i as usize) < self.cols.len()).then_some(i as usize)
    }

    fn mark(&mut self, x0: f64, x1: f64, y0: f64, y1: f64) {
        let (a, b) = (x0.min(x1), x0.max(x1));
        let (lo, hi) = (y0.min(y1), y0.max(y1));
        let first = self.index(a.max(self.left)).unwrap_or(0);
        let last = self.index(b).unwrap_or(self.cols.len().saturating_sub(1));
        if b < self.left {
            return;
        }
        let end = last.max(first).min(self.cols.len() - 1);
        for c in &mut self.cols[first..=end] {
            // Keep the list short: merge with a stretch it touches.
            if let Some(s) = c.iter_mut().find(|s| s.0 <= hi && lo <= s.1) {
                s.0 = s.0.min(lo);
                s.1 = s.1.max(hi);
            } else {
                c.push((lo, hi));
            }
        }
    }

    /// A drawn polyline, `pad` pixels either side of it.
    pub(super) fn line(&mut self, pts: &[(f64, f64)], pad: f64) {
        for w in pts.windows(2) {
            let ((xa, ya), (xb, yb)) = (w[0], w[1]);
            let steps = (xb - xa).abs().ceil().max(1.0) as usize;
            for k in 0..steps {
                let t0 = k as f64 / steps as f64;
                let t1 = (k + 1) as f64 / steps as f64;
                let (x0, x1) = (xa + (xb - xa) * t0, xa + (xb - xa) * t1);
                let (y0, y1) = (ya + (yb - ya) * t0, ya + (yb - ya) * t1);
                self.mark(x0 - pad, x1 + pad, y0 - pad, y1 + pad);
            }
        }
    }

    pub(super) fn rect(&mut self, b: Box2) {
        self.mark(b.x0, b.x1, b.y0, b.y1);
    }

    /// Nothing drawn inside `b`, and `b` inside the bounds.
    pub(super) fn free(&self, b: Box2) -> bool {
        let inside = b.x0 >= self.bounds.x0
            && b.x1 <= self.bounds.x1
            && b.y0 >= self.bounds.y0
            && b.y1 <= self.bounds.y1;
        if !inside {
            return false;
        }
        let (Some(a), Some(z)) = (self.index(b.x0), self.index(b.x1)) else {
            return false;
        };
        self.cols[a..=z]
            .iter()
            .all(|c| c.iter().all(|s| s.1 < b.y0 || s.0 > b.y1))
    }

    /// The first of `candidates` that is free, now taken.
    pub(super) fn take(&mut self, candidates: &[Box2]) -> Option<Box2> {
        let b = *candidates.iter().find(|b| self.free(**b))?;
        self.rect(b);
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_goes_where_no_line_is() {
        let mut o = Occupied::new(Box2 {
            x0: 0.0,
            y0: 0.0,
            x1: 100.0,
            y1: 100.0,
        });
        o.line(&[(0.0, 50.0), (100.0, 50.0)], 2.0);
        let over = Box2 {
            x0: 10.0,
            y0: 40.0,
            x1: 40.0,
            y1: 55.0,
        };
        let above = Box2 {
            x0: 10.0,
            y0: 30.0,
            x1: 40.0,
            y1: 45.0,
        };
        assert!(!o.free(over), "crossed by the line");
        assert!(o.free(above), "control: clear of it");
        assert_eq!(o.take(&[over, above]), Some(above));
        assert!(!o.free(above), "taken");
        assert!(
            !o.free(Box2 {
                x0: 90.0,
                y0: 0.0,
                x1: 120.0,
                y1: 10.0
            }),
            "outside"
        );
    }
}
