//! Test-set metrics: RMSE, MAE, NLPD, interval coverage; error rate and log loss; the median.

use crate::error::{check_open_unit, Error, Result};

fn check_len(a: usize, b: usize) -> Result<()> {
    if a == 0 {
        return Err(Error::Empty {
            what: "evaluation set",
        });
    }
    if a != b {
        return Err(Error::ShapeMismatch {
            what: "predictions vs targets",
            expected: format!("{b}"),
            found: format!("{a}"),
        });
    }
    Ok(())
}

/// The median of `v` (reordered in place): the middle value, or the mean of the two middle
/// values for an even count; `None` when `v` is empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (_, &mut upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(0.5 * (lower + upper))
}

/// Root mean squared error.
pub fn rmse(mean: &[f64], y: &[f64]) -> Result<f64> {
    check_len(mean.len(), y.len())?;
    Ok((mean
        .iter()
        .zip(y)
        .map(|(m, y)| (m - y).powi(2))
        .sum::<f64>()
        / y.len() as f64)
        .sqrt())
}

/// Mean absolute error.
pub fn mae(mean: &[f64], y: &[f64]) -> Result<f64> {
    check_len(mean.len(), y.len())?;
    Ok(mean.iter().zip(y).map(|(m, y)| (m - y).abs()).sum::<f64>() / y.len() as f64)
}

/// Mean negative log predictive density `½ ln(2π s²) + (y − m)²/(2 s²)` with the
/// predictive variance of y (noise included).
pub fn nlpd(mean: &[f64], var: &[f64], y: &[f64]) -> Result<f64> {
    check_len(mean.len(), y.len())?;
    check_len(var.len(), y.len())?;
    let s = mean
        .iter()
        .zip(var)
        .zip(y)
        .map(|((m, v), y)| {
            0.5 * (2.0 * std::f64::consts::PI * v).ln() + (y - m).powi(2) / (2.0 * v)
        })
        .sum::<f64>();
    Ok(s / y.len() as f64)
}

/// Fraction of targets inside the central `level` predictive interval `m ± z·s`.
pub fn coverage(mean: &[f64], var: &[f64], y: &[f64], level: f64) -> Result<f64> {
    check_len(mean.len(), y.len())?;
    check_len(var.len(), y.len())?;
    check_open_unit("coverage level", level)?;
    let z = normal_quantile(0.5 + level / 2.0);
    let inside = mean
        .iter()
        .zip(var)
        .zip(y)
        .filter(|((m, v), y)| (*y - *m).abs() <= z * v.sqrt())
        .count();
    Ok(inside as f64 / y.len() as f64)
}

/// Fraction of sign disagreements between scores and ±1 labels (score 0 counts as +1).
pub fn error_rate(score: &[f64], y: &[f64]) -> Result<f64> {
    check_len(score.len(), y.len())?;
    let wrong = score
        .iter()
        .zip(y)
        .filter(|(s, y)| (if **s >= 0.0 { 1.0 } else { -1.0 }) != **y)
        .count();
    Ok(wrong as f64 / y.len() as f64)
}

/// The error rate of always predicting the most frequent label of `y` (±1 labels or class
/// indices): the baseline a classifier's certificate must beat to say anything about it.
pub fn majority_rate(y: &[f64]) -> Result<f64> {
    check_len(y.len(), y.len())?;
    let mut counts: Vec<(u64, usize)> = Vec::new();
    for v in y {
        match counts.iter_mut().find(|(bits, _)| *bits == v.to_bits()) {
            Some((_, c)) => *c += 1,
            None => counts.push((v.to_bits(), 1)),
        }
    }
    let most = counts.iter().map(|(_, c)| *c).max().unwrap_or(0);
    Ok((y.len() - most) as f64 / y.len() as f64)
}

/// Mean negative log probability of the observed ±1 labels given `p(y = +1)`.
pub fn log_loss(p_positive: &[f64], y: &[f64]) -> Result<f64> {
    check_len(p_positive.len(), y.len())?;
    let s = p_positive
        .iter()
        .zip(y)
        .map(|(p, y)| {
            let q = if *y > 0.0 { *p } else { 1.0 - p };
            -q.max(f64::MIN_POSITIVE).ln()
        })
        .sum::<f64>();
    Ok(s / y.len() as f64)
}

/// One bin of a reliability diagram: the rows whose predicted p(y = +1) fell in
/// `[lower, upper)` (the last bin includes 1).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReliabilityBin {
    /// Lower edge of the bin.
    pub lower: f64,
    /// Upper edge of the bin.
    pub upper: f64,
    /// Rows in the bin.
    pub count: usize,
    /// Mean predicted p(y = +1) over them (`NaN` for an empty bin).
    pub mean_predicted: f64,
    /// Fraction of them labelled +1 (`NaN` for an empty bin).
    pub observed: f64,
}

/// Reliability diagram of probabilities `p_positive` against ±1 labels `y`: `bins` equal-width
/// bins on [0, 1], each with its mean prediction and observed frequency of +1 (a calibrated
/// classifier has the two equal in every bin).
pub fn reliability(p_positive: &[f64], y: &[f64], bins: usize) -> Result<Vec<ReliabilityBin>> {
    check_len(p_positive.len(), y.len())?;
    if bins == 0 {
        return Err(Error::InvalidParameter {
            name: "reliability bins",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    if let Some(&bad) = p_positive.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(Error::InvalidParameter {
            name: "predicted probability",
            value: bad,
            reason: "must lie in [0, 1]",
        });
    }
    let mut sums = vec![(0usize, 0.0, 0usize); bins];
    for (p, label) in p_positive.iter().zip(y) {
        let b = ((p * bins as f64) as usize).min(bins - 1);
        sums[b].0 += 1;
        sums[b].1 += p;
        sums[b].2 += usize::from(*label > 0.0);
    }
    Ok(sums
        .into_iter()
        .enumerate()
        .map(|(b, (count, p_sum, positives))| ReliabilityBin {
            lower: b as f64 / bins as f64,
            upper: (b + 1) as f64 / bins as f64,
            count,
            mean_predicted: p_sum / count as f64,
            observed: positives as f64 / count as f64,
        })
        .collect())
}

/// Standard normal quantile Φ⁻¹(p): Acklam's rational approximation refined by one Halley
/// step on `erfc` (relative error ≈ 1e-15).
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let lo = 0.02425;
    let x = if p < lo {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - lo {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // Halley refinement: e = Φ(x) − p.
    let e = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

#[cfg(test)]
mod tests {
    /// The middle value of an odd count, the mean of the two middle values of an even one,
    /// whatever the order; none of an empty list.
    #[test]
    fn median_of_odd_and_even_counts() {
        use super::median;
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut [5.0, 5.0, -1.0, 7.0, 0.5, 9.0]), Some(5.0));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn majority_rate_counts_the_other_labels() {
        use super::majority_rate;
        assert_eq!(majority_rate(&[1.0, -1.0, 1.0, 1.0]).unwrap(), 0.25);
        assert_eq!(majority_rate(&[0.0, 1.0, 2.0, 2.0, 1.0, 2.0]).unwrap(), 0.5);
        assert_eq!(majority_rate(&[-1.0; 3]).unwrap(), 0.0);
        assert!(majority_rate(&[]).is_err());
    }

    use super::*;

    #[test]
    fn quantile_inverts_the_cdf() {
        for &p in &[1e-10, 0.001, 0.02, 0.3, 0.5, 0.7, 0.975, 0.999999] {
            let x = normal_quantile(p);
            let back = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
            assert!(
                (back - p).abs() < 1e-14 * p.max(1e-3),
                "p={p} x={x} back={back}"
            );
        }
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-13);
    }

    #[test]
    fn reliability_bins_count_rows_and_positives() {
        let p = [0.05, 0.15, 0.12, 0.95, 1.0, 0.5];
        let y = [-1.0, 1.0, -1.0, 1.0, 1.0, -1.0];
        let bins = reliability(&p, &y, 10).unwrap();
        assert_eq!(bins.len(), 10);
        assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), 6);
        assert_eq!((bins[1].count, bins[1].observed), (2, 0.5));
        assert!((bins[1].mean_predicted - 0.135).abs() < 1e-15);
        // p = 1 falls in the last bin, p = 0.5 in the sixth.
        assert_eq!((bins[9].count, bins[9].observed), (2, 1.0));
        assert_eq!((bins[5].count, bins[5].observed), (1, 0.0));
        assert!(bins[3].mean_predicted.is_nan() && bins[3].count == 0);
        assert!(reliability(&[1.5], &[1.0], 10).is_err());
        assert!(reliability(&[0.5], &[1.0], 0).is_err());
        assert!(reliability(&[], &[], 10).is_err());
    }

    #[test]
    fn metrics_on_a_small_example() {
        let (m, y) = ([1.0, 2.0, 3.0], [1.0, 4.0, 1.0]);
        assert!((rmse(&m, &y).unwrap() - (8.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((mae(&m, &y).unwrap() - 4.0 / 3.0).abs() < 1e-15);
        let v = [1.0; 3];
        let expected = 0.5 * (2.0 * std::f64::consts::PI).ln() + (0.0 + 4.0 + 4.0) / 6.0;
        assert!((nlpd(&m, &v, &y).unwrap() - expected).abs() < 1e-14);
        assert!((coverage(&m, &v, &y, 0.95).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(
            error_rate(&[0.3, -2.0, 0.0], &[1.0, 1.0, -1.0]).unwrap(),
            2.0 / 3.0
        );
        assert!(rmse(&[1.0], &[1.0, 2.0]).is_err());
        assert!(rmse(&[], &[]).is_err());
    }
}
