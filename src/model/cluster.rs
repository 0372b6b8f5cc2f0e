//! Stage 6: clusters, the connected components of the reported pairs.
//!
//! Near-duplication is not transitive, so a cluster can hold two documents that are not near
//! duplicates of each other but are linked through a third; that is the documented meaning of a
//! cluster (the third seed: "regarded as transitive for convenience").

/// Union-find with path halving and union by size.
#[derive(Debug, Clone)]
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets.
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of `a` and `b`; returns false when they were already one set.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }
}

/// Groups of two or more of the `n` items linked by `edges`. Each group is sorted ascending and the
/// groups are ordered by their first member, so the result depends only on the edges, never on
/// their order.
pub(crate) fn components(n: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> Vec<Vec<u32>> {
    let mut uf = UnionFind::new(n);
    for (a, b) in edges {
        uf.union(a, b);
    }
    let mut groups: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for x in 0..n as u32 {
        let r = uf.find(x);
        groups.entry(r).or_default().push(x);
    }
    let mut out: Vec<Vec<u32>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort_unstable_by_key(|g| g[0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_sorted_and_ignore_singletons() {
        let c = components(7, [(5, 3), (1, 0), (3, 6)]);
        assert_eq!(c, vec![vec![0, 1], vec![3, 5, 6]]);
    }

    #[test]
    fn edge_order_does_not_matter() {
        let a = components(5, [(0, 1), (1, 2), (3, 4)]);
        let b = components(5, [(3, 4), (2, 1), (1, 0)]);
        assert_eq!(a, b);
    }

    #[test]
    fn union_reports_whether_it_merged() {
        let mut uf = UnionFind::new(3);
        assert!(uf.union(0, 1));
        assert!(!uf.union(1, 0));
        assert_eq!(uf.find(0), uf.find(1));
        assert_ne!(uf.find(2), uf.find(0));
    }
}
