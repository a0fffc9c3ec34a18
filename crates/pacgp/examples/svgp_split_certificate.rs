//! The bound-trained sparse variational classifier with a split prior against the held-out
//! error it bounds (a measurement for the performance page's certificate table).
//!
//! `cargo run --release -p pacgp --example svgp_split_certificate -- TRAIN.csv TEST.csv M N
//! OFFSET [FRACTION [SEED]]` fits on rows `OFFSET..OFFSET+N` of TRAIN.csv (label in the last
//! column; `make_data.py --large`'s sets) with M inducing inputs, the pipeline's defaults
//! (SE-ARD, probit, δ = 0.01, kl bound; Adam on minibatches of 1024 rows for 2000 steps where
//! N·M² exceeds the full-batch work, else L-BFGS) and part A a fraction FRACTION (default 0.5)
//! of a split seeded SEED (default 0). Prints the certificate, its parts, the test Gibbs error
//! it bounds, their ratio, the test error of the posterior mean's sign and the seconds.

use std::time::Instant;

use faer::Mat;
use pacgp::data::{load_csv_classification, CsvOptions, Dataset};
use pacgp::kernel::Kernel;
use pacgp::objective::gp_split::SplitFraction;
use pacgp::spec::{DEFAULT_SVGP_BATCH, FULL_BATCH_WORK};
use pacgp::special::normal_cdf;
use pacgp::svgp::fit::DEFAULT_STEPS;
use pacgp::svgp::split::fit_svgp_split_prior;
use pacgp::svgp::{SvgpCriterionSpec, SvgpSettings};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let usage = "TRAIN.csv TEST.csv M N OFFSET [FRACTION [SEED]]";
    let [train, test, m, n, offset] = &a[..5.min(a.len())] else {
        return Err(usage.into());
    };
    let (m, n, offset): (usize, usize, usize) = (m.parse()?, n.parse()?, offset.parse()?);
    let fraction: f64 = a.get(5).map_or(Ok(0.5), |f| f.parse())?;
    let seed: u64 = a.get(6).map_or(Ok(0), |s| s.parse())?;
    let (all, _) = load_csv_classification(train, &CsvOptions::default())?;
    let rows: Vec<usize> = (offset..offset + n).collect();
    let data = all.subset(&rows);
    let (test, _) = load_csv_classification(test, &CsvOptions::default())?;

    let mut st = SvgpSettings::new(
        m,
        SvgpCriterionSpec::Bound {
            kind: pacgp::bounds::BoundKind::Kl,
        },
        pacgp::bounds::DEFAULT_DELTA,
        seed,
    );
    if (n as f64) * (m * m) as f64 > FULL_BATCH_WORK {
        st.batch = Some(DEFAULT_SVGP_BATCH);
        st.max_iter = DEFAULT_STEPS;
    }
    let kernel = Kernel::from_spec("se-ard", data.d())?;
    let t0 = Instant::now();
    let fit = fit_svgp_split_prior(&kernel, &data, &st, SplitFraction::Fixed(fraction))?;
    let seconds = t0.elapsed().as_secs_f64();
    let (gibbs, error) = test_errors(&fit, &test)?;
    let c = &fit.certificate;
    println!(
        "N {n} offset {offset} M {m} F {fraction} seed {seed}: certificate {:.4} (risk on B {:.4}, \
         KL {:.2} nats, N_B {}), test Gibbs error {gibbs:.4}, ratio {:.3}, held {}, test error \
         {error:.4}, {seconds:.0} s",
        c.bound,
        c.empirical_risk,
        c.kl,
        c.n,
        c.bound / gibbs,
        c.bound >= gibbs
    );
    Ok(())
}

/// The test Gibbs error `mean Φ(−yμ/σ)` and the error of `sgn μ` on `test` (raw inputs,
/// standardised by the fit's part-A scaler).
fn test_errors(
    fit: &pacgp::svgp::split::SvgpSplitFit,
    test: &Dataset,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let x: Mat<f64> = fit.split.x_scaler.transform(test.x.as_ref())?;
    let marg = fit.posterior.predict(x.as_ref())?;
    let n = test.n() as f64;
    let (mut gibbs, mut wrong) = (0.0, 0usize);
    for i in 0..test.n() {
        let (y, mu) = (test.y[i], marg.mean[i]);
        gibbs += normal_cdf(-y * mu / marg.var[i].sqrt());
        wrong += usize::from(y * mu <= 0.0);
    }
    Ok((gibbs / n, wrong as f64 / n))
}
