//! Elementwise math for bulk kernel fills, compiled for the CPU's vector unit at run time.
//!
//! [`exp`] is the exponential as straight-line IEEE arithmetic (no table, no branch, no libm
//! call), so that a loop over a slice auto-vectorises inside [`vectorised`], which runs its
//! closure under pulp's runtime-detected target features (AVX2 + FMA where present). This
//! matters twice on AVX-512 machines: the loop runs four lanes wide instead of calling libm
//! per element, and its code is VEX-encoded, so it pays no AVX → SSE transition after faer's
//! product kernels have left a worker's upper vector state dirty (glibc's `exp` did: 143 ns a
//! call against 4.5 ns on machine F).
//! Scalar loops that must call glibc after a product clear that state first
//! ([`clear_upper_vector_state`]).
//!
//! Algorithm (Cody–Waite reduction, Muller, *Elementary Functions*, §11.3): `q = round(x/ln 2)`,
//! `s = x − q·ln 2` in two FMA steps with `ln 2` split as fdlibm's `ln2_hi + ln2_lo` (`q·ln2_hi`
//! exact), `eˢ = 1 + (s + s²·P(s))` with `P` the Taylor series to degree 13 (truncation
//! `|s|¹⁴/14! ≤ 4·10⁻¹⁸` for `|s| ≤ ln2/2`), then `2^q` applied as `2^⌊q/2⌋ · 2^(q−⌊q/2⌋)` so that
//! subnormal results are rounded once, as libm's. Every step is an exactly rounded IEEE
//! operation (`mul_add` is a fused multiply-add on every target), so the result does not depend
//! on the vector width or the dispatch path. Measured error against glibc's `exp`: within one
//! ulp (see the tests).

/// `1.5 · 2⁵²`: adding it rounds a double of magnitude < 2⁵¹ to an integer (ties to even).
const ROUND_SHIFT: f64 = 6_755_399_441_055_744.0;
/// `2⁵² + 1023`: adding it to an integer-valued `k` puts the biased exponent `k + 1023` in the
/// low mantissa bits, ready to be shifted into place.
const EXP_BIAS_SHIFT: f64 = 4_503_599_627_371_519.0;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// fdlibm's `ln2_hi` (low 21 bits of the mantissa zero: `q·ln2_hi` is exact for `|q| < 2¹¹`).
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
/// fdlibm's `ln2_lo = ln 2 − ln2_hi`.
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// Below this `eˣ` is 0 in double precision (`e^−745.14` is half the least subnormal).
const EXP_LO: f64 = -746.0;
/// Above this `eˣ` overflows (`ln(f64::MAX) ≈ 709.78`).
const EXP_HI: f64 = 710.0;

/// `1/k!` for k = 2..=13, highest first (Horner order).
const TAYLOR: [f64; 12] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];

/// `2^k` for an integer-valued `k` in `[−1022, 1023]`, by building the exponent bits.
#[inline(always)]
fn pow2(k: f64) -> f64 {
    f64::from_bits((k + EXP_BIAS_SHIFT).to_bits() << 52)
}

/// `eˣ` within one ulp of the correctly rounded value, NaN for NaN, `+∞` above ≈ 709.78, 0
/// below ≈ −745.1; branch-free so that loops over slices vectorise (see the module docs).
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    // Comparisons (not f64::max/min) so that NaN passes through.
    let x = if x < EXP_LO { EXP_LO } else { x };
    let x = if x > EXP_HI { EXP_HI } else { x };
    let q = x.mul_add(LOG2_E, ROUND_SHIFT) - ROUND_SHIFT;
    let s = (-q).mul_add(LN2_HI, x);
    let s = (-q).mul_add(LN2_LO, s);
    let mut p = TAYLOR[0];
    for c in &TAYLOR[1..] {
        p = p.mul_add(s, *c);
    }
    let u = 1.0 + (s * s).mul_add(p, s);
    let q1 = (0.5 * q).floor();
    u * pow2(q1) * pow2(q - q1)
}

/// A loop to run under [`vectorised`]. Implement [`VectorLoop::run`] with `#[inline(always)]`
/// and call only `#[inline(always)]` code from it: the body must be inlined into pulp's
/// target-feature function to be compiled for it (a closure is not reliably inlined, and
/// `mul_add` outside it becomes a call to a software FMA).
pub trait VectorLoop {
    /// What the loop returns.
    type Output;
    /// The loop.
    fn run(self) -> Self::Output;
}

struct Dispatch<L>(L);

impl<L: VectorLoop> pulp::WithSimd for Dispatch<L> {
    type Output = L::Output;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> L::Output {
        self.0.run()
    }
}

/// Run `body` compiled for the best vector extension this CPU has (pulp's runtime dispatch:
/// AVX2 + FMA on x86-64 where present); its loops over [`exp`] and plain arithmetic then
/// auto-vectorise.
#[inline(always)]
pub fn vectorised<L: VectorLoop>(body: L) -> L::Output {
    pulp::Arch::new().dispatch(Dispatch(body))
}

/// `xs[i] ← e^{xs[i]}` for a whole slice, vectorised.
pub fn exp_in_place(xs: &mut [f64]) {
    struct ExpSlice<'a>(&'a mut [f64]);
    impl VectorLoop for ExpSlice<'_> {
        type Output = ();
        #[inline(always)]
        fn run(self) {
            for v in self.0.iter_mut() {
                *v = exp(*v);
            }
        }
    }
    vectorised(ExpSlice(xs))
}

/// Clears the upper halves of the vector registers (`vzeroupper`, on an x86-64-v3 CPU: AVX2,
/// FMA, …; every AVX-512 CPU is one).
/// faer's AVX-512 product kernels return with them dirty, and until they are cleared every
/// call from this crate's SSE code into glibc's VEX-encoded `exp`, `log` or `log1p` pays a
/// state transition: 143 ns a call against 4.5 ns (the CHANGELOG's svgp entry of 2026-12-03).
/// Call it before a scalar loop of such calls that follows a product on the same thread. It
/// changes no value.
pub fn clear_upper_vector_state() {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(simd) = pulp::x86::V3::try_new() {
        simd.avx._mm256_zeroupper();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Distance in units in the last place between two finite doubles of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        assert!(a.is_sign_positive() && b.is_sign_positive(), "{a} {b}");
        a.to_bits().abs_diff(b.to_bits())
    }

    /// Within one ulp of libm's `exp` (itself < 0.52 ulp from the true value) on 2·10⁶ seeded
    /// points over the whole finite range, densely on the kernels' range [−50, 0], at the
    /// subnormal edge and at exactly representable cases; identical on the vectorised path.
    #[test]
    fn exp_is_within_one_ulp_of_libm() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut xs: Vec<f64> = (0..1_000_000)
            .map(|_| rng.gen_range(-745.0..709.7))
            .collect();
        xs.extend((0..1_000_000).map(|_| rng.gen_range(-50.0..0.0)));
        xs.extend((0..20_000).map(|_| rng.gen_range(-745.1..-707.0)));
        xs.extend([0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 0.5, 709.0, -708.3]);
        let mut worst = 0;
        for &x in &xs {
            let (ours, libm) = (exp(x), x.exp());
            let d = ulps(ours, libm);
            worst = worst.max(d);
            assert!(d <= 1, "exp({x:e}): {ours:e} vs libm {libm:e}, {d} ulps");
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        let mut v = xs.clone();
        exp_in_place(&mut v);
        for (x, e) in xs.iter().zip(&v) {
            assert_eq!(e.to_bits(), exp(*x).to_bits(), "exp({x:e}) vectorised");
        }
        assert!(worst <= 1);
    }

    /// The edges: overflow to +∞, underflow to 0 and through the subnormals, NaN through.
    #[test]
    fn exp_edges_match_libm() {
        for x in [709.78, 709.79, 710.0, 1e10, f64::INFINITY] {
            assert_eq!(exp(x), x.exp(), "exp({x})");
        }
        for x in [-745.13, -745.14, -745.2, -746.0, -1e10, f64::NEG_INFINITY] {
            assert_eq!(exp(x), x.exp(), "exp({x})");
        }
        for x in [-708.5, -720.0, -740.0, -744.9] {
            assert!(ulps(exp(x), x.exp()) <= 1, "exp({x})");
        }
        assert!(exp(f64::NAN).is_nan());
    }
}
