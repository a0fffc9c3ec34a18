"""scikit-learn kernel objects as pacgp kernel expressions (``kernel=RBF() + WhiteKernel()``).

pacgp's kernels are sums of products of base kernels (``se``, ``matern12/32/52``, each with
``-ard``, ``linear``, ``const``; ``*`` binds tighter than ``+``), each base kernel but
``const`` with its own signal variance, all on standardised inputs. A scikit-learn kernel is
translated by expanding its products over its sums into that form:

- ``RBF`` → ``se`` (``se-ard`` when its ``length_scale`` is a vector), ``Matern(nu)`` with
  ν ∈ {½, 3/2, 5/2} → ``matern12/32/52`` (``-ard`` likewise);
- ``ConstantKernel`` → ``const``; in a product with another kernel it is dropped, as the other
  kernel's own signal variance already scales the product;
- ``DotProduct`` (σ₀² + x·x') → ``linear + const``;
- ``WhiteKernel`` as a term of the top-level sum → dropped: the observation noise σ² is the
  likelihood's, which every pacgp regressor fits; anywhere else it is an error.

Only the structure is translated: the kernel's hyperparameter values are starting points in
scikit-learn, while pacgp starts from its own (all ones) on standardised inputs. Any other
kernel (RationalQuadratic, ExpSineSquared, Exponentiation, Matern with another ν, …) is a
``ValueError`` naming what is accepted.
"""

import numpy as np

ACCEPTED = (
    "RBF, Matern(nu=0.5, 1.5 or 2.5), ConstantKernel, WhiteKernel (a term of the sum: the "
    "noise), DotProduct, and their sums and products"
)

_MATERN = {0.5: "matern12", 1.5: "matern32", 2.5: "matern52"}


def is_sklearn_kernel(kernel):
    """Whether ``kernel`` is a scikit-learn kernel object (not a pacgp kernel string)."""
    try:
        from sklearn.gaussian_process.kernels import Kernel
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        return False
    return isinstance(kernel, Kernel)


def to_spec(kernel):
    """The pacgp kernel expression of a scikit-learn kernel (see the module's doc)."""
    terms = [t for t in _terms(kernel, top=True) if t is not None]
    if not terms:
        raise ValueError(
            f"kernel {kernel!r} is only noise (WhiteKernel); give a kernel for the signal too"
        )
    return " + ".join("*".join(_drop_constants(t)) for t in terms)


def _terms(kernel, top):
    """Sum-of-products form: a list of terms, each a list of base kernel names (None: the
    noise term of the top-level sum)."""
    from sklearn.gaussian_process import kernels as K

    if isinstance(kernel, K.Sum):
        return _terms(kernel.k1, top) + _terms(kernel.k2, top)
    if isinstance(kernel, K.Product):
        left, right = _terms(kernel.k1, False), _terms(kernel.k2, False)
        return [a + b for a in left for b in right]
    if isinstance(kernel, K.WhiteKernel):
        if top:
            return [None]
        raise ValueError(
            "a WhiteKernel inside a product has no pacgp counterpart: pacgp's observation "
            "noise is the likelihood's; add WhiteKernel() to the sum, or leave it out"
        )
    # Matern before RBF: scikit-learn's Matern is a subclass of RBF.
    if isinstance(kernel, K.Matern):
        name = _MATERN.get(float(kernel.nu))
        if name is None:
            raise ValueError(
                f"Matern(nu={kernel.nu}) has no pacgp counterpart; nu is 0.5, 1.5 or 2.5"
            )
        return [[name + _ard(kernel.length_scale)]]
    if isinstance(kernel, K.RBF):
        return [["se" + _ard(kernel.length_scale)]]
    if isinstance(kernel, K.ConstantKernel):
        return [["const"]]
    if isinstance(kernel, K.DotProduct):
        return [["linear"], ["const"]]
    raise ValueError(
        f"scikit-learn's {type(kernel).__name__} has no pacgp counterpart; pacgp accepts "
        f"{ACCEPTED}, or a pacgp kernel string such as 'se-ard' or 'matern32 + linear'"
    )


def _ard(length_scale):
    """``-ard`` for a vector of length scales (one per input dimension)."""
    return "-ard" if np.ndim(length_scale) > 0 and np.size(length_scale) > 1 else ""


def _drop_constants(factors):
    """A product's factors without ``const`` when another factor carries a signal variance."""
    kept = [f for f in factors if f != "const"]
    return kept if kept else ["const"]
