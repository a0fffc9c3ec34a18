//! Anderson acceleration of fixed-point iterations (the EP sweeps).

/// Anderson acceleration (type II, Walker & Ni 2011, SIAM J. Numer. Anal. 49(4)) of a
/// fixed-point iteration `x ← T(x)`: from the last `m + 1` pairs `(T(x_i), f_i = T(x_i) − x_i)`
/// the next iterate is `T(x_k) − ΔG γ` with `γ = argmin ‖f_k − ΔF γ‖`, the differences of
/// consecutive pairs in the columns of `ΔG`, `ΔF`. It leaves the fixed points unchanged and
/// turns slow linear convergence into much faster convergence near them.
#[derive(Clone, Debug)]
pub struct Anderson {
    memory: usize,
    g: std::collections::VecDeque<Vec<f64>>,
    f: std::collections::VecDeque<Vec<f64>>,
}

impl Anderson {
    /// An accelerator mixing up to `memory` differences.
    pub fn new(memory: usize) -> Self {
        Self {
            memory,
            g: Default::default(),
            f: Default::default(),
        }
    }

    /// Forget the history (after a rejected step); the next step is the plain `T(x)`.
    pub fn reset(&mut self) {
        self.g.clear();
        self.f.clear();
    }

    /// The next iterate from the current `x` and `g = T(x)`.
    pub fn next(&mut self, x: &[f64], g: &[f64]) -> Vec<f64> {
        let f: Vec<f64> = g.iter().zip(x).map(|(g, x)| g - x).collect();
        self.g.push_back(g.to_vec());
        self.f.push_back(f);
        while self.g.len() > self.memory + 1 {
            self.g.pop_front();
            self.f.pop_front();
        }
        let k = self.g.len();
        if k < 2 {
            return g.to_vec();
        }
        let diff = |h: &std::collections::VecDeque<Vec<f64>>, j: usize| -> Vec<f64> {
            h[j + 1].iter().zip(&h[j]).map(|(a, b)| a - b).collect()
        };
        let df: Vec<Vec<f64>> = (0..k - 1).map(|j| diff(&self.f, j)).collect();
        let dot = crate::linalg::dot;
        // Normal equations of the small least-squares problem, with a relative ridge.
        let mut a = faer::Mat::from_fn(k - 1, k - 1, |i, j| dot(&df[i], &df[j]));
        let ridge = 1e-10
            * (0..k - 1)
                .map(|i| a[(i, i)])
                .sum::<f64>()
                .max(f64::MIN_POSITIVE);
        for i in 0..k - 1 {
            a[(i, i)] += ridge;
        }
        let fk = &self.f[k - 1];
        let b: Vec<f64> = df.iter().map(|c| dot(c, fk)).collect();
        let Ok(chol) = crate::linalg::Cholesky::factor(
            a.as_ref(),
            &crate::linalg::JitterPolicy::none(),
            "Anderson normal equations",
        ) else {
            self.reset();
            return g.to_vec();
        };
        let gamma = chol.solve_vec(&b);
        let mut out = g.to_vec();
        for (j, gj) in gamma.iter().enumerate() {
            let dg = diff(&self.g, j);
            out.iter_mut().zip(&dg).for_each(|(o, d)| *o -= gj * d);
        }
        out
    }
}
