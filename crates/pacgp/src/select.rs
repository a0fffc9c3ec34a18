//! The one menu choice. A [`Menu`] is a list of candidates fixed before the data are seen
//! (kernels, split fractions and directions, Catoni's λ, the SVM's kernel and slack, the scale
//! μ of its posterior mean); [`Menu::by_bound`] evaluates every candidate, keeps the one of
//! lowest score (the first on ties, so the choice is deterministic) and charges the menu's
//! union-bound price itself: `ln |menu|` when the score looks at the bound's sample, nothing
//! when it does not (a choice made on part A of a split). The price is handed to the scoring
//! function, so each candidate's certificate already pays for the choice.

use crate::certificate::PenaltyTerm;
use crate::error::{Error, Result};

/// Whether choosing from a menu costs `ln |menu|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Price {
    /// The score looks at the bound's sample: a union bound over the menu, `ln |menu|`.
    Charged,
    /// The score does not see the bound's sample (why, in words): no charge.
    Free(&'static str),
}

/// Candidates fixed in advance, what they are, and whether the choice is charged.
#[derive(Clone, Debug)]
pub struct Menu<T> {
    /// The candidates, in the order ties are broken.
    pub items: Vec<T>,
    /// What is chosen, in words (the certificate's penalty term names it).
    pub what: String,
    /// Charged or free.
    pub price: Price,
}

/// The candidates whose scoring failed, by index, with their errors.
pub type Skipped = Vec<(usize, Error)>;

/// The chosen candidate: its index, what scoring it gave, its score, and the menu's price.
#[derive(Clone, Debug)]
pub struct Chosen<R> {
    /// Index into the menu.
    pub index: usize,
    /// What the scoring function returned for it.
    pub value: R,
    /// Its score (a bound, or the criterion the menu is chosen by).
    pub score: f64,
    /// The price of the choice (already in the candidate's certificate).
    pub price: PenaltyTerm,
}

impl<T> Menu<T> {
    /// A menu whose choice is paid for: `ln |items|`.
    pub fn charged(items: Vec<T>, what: impl Into<String>) -> Self {
        Self {
            items,
            what: what.into(),
            price: Price::Charged,
        }
    }

    /// A menu chosen without the bound's sample (`why`): free.
    pub fn free(items: Vec<T>, what: impl Into<String>, why: &'static str) -> Self {
        Self {
            items,
            what: what.into(),
            price: Price::Free(why),
        }
    }

    /// The number of candidates.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the menu has no candidates.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The price of choosing from the menu: `ln |menu|` (0 for a single candidate), or nothing
    /// for a free menu.
    pub fn price(&self) -> PenaltyTerm {
        match self.price {
            Price::Charged => PenaltyTerm::candidates(self.items.len(), &self.what),
            Price::Free(why) => PenaltyTerm {
                what: format!("{}: one of {}, chosen {why}", self.what, self.items.len()),
                nats: 0.0,
            },
        }
    }

    /// Score every candidate (`score` gets the candidate and the menu's price) and keep the
    /// lowest; a NaN score never wins. An empty menu, or one where every score is NaN, is an
    /// error.
    pub fn by_bound<R>(
        &self,
        mut score: impl FnMut(&T, &PenaltyTerm) -> Result<(R, f64)>,
    ) -> Result<Chosen<R>> {
        let price = self.price();
        let mut best: Option<Chosen<R>> = None;
        for (index, item) in self.items.iter().enumerate() {
            let (value, s) = score(item, &price)?;
            if !s.is_nan() && best.as_ref().is_none_or(|b| s < b.score) {
                best = Some(Chosen {
                    index,
                    value,
                    score: s,
                    price: price.clone(),
                });
            }
        }
        best.ok_or_else(|| self.nothing())
    }

    /// [`Menu::by_bound`] with the candidates scored in parallel (same choice).
    pub fn by_bound_par<R: Send>(
        &self,
        score: impl Fn(&T, &PenaltyTerm) -> Result<(R, f64)> + Sync,
    ) -> Result<Chosen<R>>
    where
        T: Sync,
    {
        use rayon::prelude::*;
        let price = self.price();
        // A fit's stop signal reaches the candidates' optimisers on the worker threads.
        let watch = crate::optim::stop::current();
        let scored: Vec<(R, f64)> = self
            .items
            .par_iter()
            .map(|item| crate::optim::stop::within(watch.as_ref(), || score(item, &price)))
            .collect::<Result<_>>()?;
        let mut best: Option<(usize, f64)> = None;
        for (i, (_, s)) in scored.iter().enumerate() {
            if !s.is_nan() && best.is_none_or(|(_, b)| *s < b) {
                best = Some((i, *s));
            }
        }
        let (index, s) = best.ok_or_else(|| self.nothing())?;
        let value = scored.into_iter().nth(index).map(|(v, _)| v);
        Ok(Chosen {
            index,
            value: value.ok_or_else(|| self.nothing())?,
            score: s,
            price,
        })
    }

    /// [`Menu::by_bound_par`] where a candidate whose scoring fails is skipped, not fatal: the
    /// choice is made among the others (the menu's price still counts every candidate, since
    /// the menu was fixed before the data), and the failures come back by index for the
    /// caller's notes. If every candidate fails, the first failure is the error. Only the best
    /// value so far is kept per worker (a candidate's value may be a whole fitted model), and
    /// ties go to the lower index, as in the sequential [`Menu::by_bound`].
    pub fn by_bound_par_skipping<R: Send>(
        &self,
        score: impl Fn(&T, &PenaltyTerm) -> Result<(R, f64)> + Sync,
    ) -> Result<(Chosen<R>, Skipped)>
    where
        T: Sync,
    {
        use rayon::prelude::*;
        let price = self.price();
        let watch = crate::optim::stop::current();
        // (index, value, score) of the best so far; a NaN score never wins.
        let better = |a: &Option<(usize, R, f64)>, i: usize, s: f64| {
            !s.is_nan() && a.as_ref().is_none_or(|b| s < b.2 || (s == b.2 && i < b.0))
        };
        let (best, mut failed) = self
            .items
            .par_iter()
            .enumerate()
            .fold(
                || (None, Vec::new()),
                |(mut best, mut failed): (Option<(usize, R, f64)>, Skipped), (i, item)| {
                    match crate::optim::stop::within(watch.as_ref(), || score(item, &price)) {
                        Ok((v, s)) if better(&best, i, s) => best = Some((i, v, s)),
                        Ok(_) => {}
                        Err(e) => failed.push((i, e)),
                    }
                    (best, failed)
                },
            )
            .reduce(
                || (None, Vec::new()),
                |(a, mut fa), (b, fb)| {
                    fa.extend(fb);
                    let best = match (a, b) {
                        (Some((i, v, s)), other) => {
                            if better(&other, i, s) {
                                Some((i, v, s))
                            } else {
                                other
                            }
                        }
                        (None, other) => other,
                    };
                    (best, fa)
                },
            );
        failed.sort_by_key(|(i, _)| *i);
        match best {
            Some((index, value, score)) => Ok((
                Chosen {
                    index,
                    value,
                    score,
                    price,
                },
                failed,
            )),
            None if !failed.is_empty() => Err(failed.swap_remove(0).1),
            None => Err(self.nothing()),
        }
    }

    fn nothing(&self) -> Error {
        Error::Numerical {
            what: "menu choice",
            message: format!(
                "no candidate of {} ({} of them) has a score",
                self.what,
                self.items.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowest score wins, the first on ties; the price is `ln k`, handed to the scoring.
    #[test]
    fn lowest_first_on_ties_and_charged_ln_k() {
        let m = Menu::charged(vec![3.0, 1.0, 2.0, 1.0], "a number");
        let c = m
            .by_bound(|x, p| {
                assert!((p.nats - 4f64.ln()).abs() < 1e-15);
                Ok((x * 10.0, *x))
            })
            .unwrap();
        assert_eq!((c.index, c.value, c.score), (1, 10.0, 1.0));
        let c = m.by_bound_par(|x, _| Ok((*x, *x))).unwrap();
        assert_eq!(c.index, 1);
        assert_eq!(Menu::charged(vec![1], "one").price().nats, 0.0);
        let f = Menu::free(vec![1, 2, 3], "t", "on part A");
        assert_eq!(f.price().nats, 0.0);
        assert!(f.price().what.contains("on part A"));
    }

    /// A NaN score never wins; nothing to choose is an error, as is a failing candidate.
    #[test]
    fn nan_scores_and_empty_menus() {
        let m = Menu::charged(vec![f64::NAN, 2.0, f64::NAN], "x");
        assert_eq!(m.by_bound(|x, _| Ok(((), *x))).unwrap().index, 1);
        let all_nan = Menu::charged(vec![f64::NAN], "x");
        assert!(all_nan.by_bound(|x, _| Ok(((), *x))).is_err());
        let empty: Menu<f64> = Menu::charged(vec![], "x");
        assert!(empty.by_bound(|x, _| Ok(((), *x))).is_err());
        assert!(m
            .by_bound(|_, _| Err::<((), f64), _>(Error::Empty { what: "x" }))
            .is_err());
    }

    /// Skipping: a failing candidate is passed over and reported by index; the price still
    /// counts it; if every candidate fails, the first failure is the error.
    #[test]
    fn failing_candidates_are_skipped_and_still_priced() {
        let m = Menu::charged(vec![0.0, 2.0, 1.0], "x");
        let score = |x: &f64, _: &PenaltyTerm| {
            if *x == 0.0 {
                Err(Error::Empty { what: "zero" })
            } else {
                Ok((*x, *x))
            }
        };
        let (c, failed) = m.by_bound_par_skipping(score).unwrap();
        assert_eq!((c.index, c.value), (2, 1.0));
        assert!((c.price.nats - 3f64.ln()).abs() < 1e-15);
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].0, 0);
        let all_fail = Menu::charged(vec![0.0, 0.0], "x");
        let e = all_fail.by_bound_par_skipping(score).unwrap_err();
        assert!(matches!(e, Error::Empty { what: "zero" }));
    }

    /// On a long menu scored in parallel (split across workers), skipping chooses what the
    /// sequential rule chooses among the candidates that score — the lowest, the first on
    /// ties, never a NaN — and reports the failures in index order.
    #[test]
    fn parallel_skipping_chooses_as_the_sequential_rule() {
        let items: Vec<usize> = (0..500).collect();
        let m = Menu::charged(items, "i");
        let score = |i: &usize, _: &PenaltyTerm| match i {
            i if i % 11 == 0 => Err(Error::Empty {
                what: "multiple of 11",
            }),
            i if i % 13 == 0 => Ok((*i, f64::NAN)),
            i => Ok((*i, ((i * 37) % 17) as f64)),
        };
        let (c, failed) = m.by_bound_par_skipping(score).unwrap();
        let want = (0..500usize)
            .filter(|i| i % 11 != 0 && i % 13 != 0)
            .min_by(|a, b| ((a * 37) % 17).cmp(&((b * 37) % 17)).then(a.cmp(b)))
            .unwrap();
        assert_eq!((c.index, c.value, c.score), (want, want, 0.0));
        let idx: Vec<usize> = failed.iter().map(|(i, _)| *i).collect();
        assert_eq!(idx, (0..500).filter(|i| i % 11 == 0).collect::<Vec<_>>());
    }
}
