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


# ---- The fitted kernel back in scikit-learn's form (``kernel_``) ----

def from_fitted(given, tree, input_scale, noise_variance=None):
    """The fitted pacgp kernel (``tree``: the library's JSON tree, ln values on standardised
    inputs) as a scikit-learn kernel object shaped like ``given``, the kernel object it was
    fitted from:

    - every stationary kernel (RBF, Matern) keeps its class and ν; its length scale is the
      fitted one times the inputs' training standard deviation (``input_scale``), so the
      object works on the raw inputs — an isotropic length scale comes back as a vector when
      the inputs' spreads differ (one length scale on standardised inputs is one per input in
      their units);
    - a product term's amplitude (the product of pacgp's per-kernel signal variances) goes to
      its ConstantKernel, or to a ConstantKernel put in front when the term had none (pacgp's
      base kernels carry their own signal variance);
    - DotProduct comes back as ``ConstantKernel(v) * DotProduct(sigma_0)`` with ``v`` the
      linear variance and ``sigma_0² v`` the constant: exact on the standardised inputs pacgp
      fits on (equal on raw inputs only when those have mean 0 and standard deviation 1);
    - the top-level WhiteKernel gets the fitted noise variance ``noise_variance``;
    - a product of sums comes back expanded into its sum of products, each with its own
      fitted values (pacgp fits them separately).

    Amplitudes and noise are on the scale of the standardised targets (a regressor's, as
    scikit-learn's ``normalize_y=True``; a classifier's latent scale)."""
    terms = _fitted_terms(tree)
    out, used = _rebuild(given, terms, np.asarray(input_scale, dtype=float), noise_variance)
    if used != len(terms):  # pragma: no cover - to_spec and the library keep the order
        raise RuntimeError("the fitted kernel's terms do not match the given kernel's")
    return out


def _fitted_terms(tree):
    """The library's kernel tree as its sum terms, each a list of base nodes (Scale around a
    stationary kernel, Linear, Constant), in the order ``to_spec`` wrote them."""
    if tree["type"] == "sum":
        return _fitted_terms(tree["left"]) + _fitted_terms(tree["right"])
    if tree["type"] == "product":
        (left,), (right,) = _fitted_terms(tree["left"]), _fitted_terms(tree["right"])
        return [left + right]
    return [[tree]]


def _amplitude(factors):
    """A product term's variance: the product of its factors' signal variances."""
    amp = 1.0
    for f in factors:
        if f["type"] in ("scale", "constant"):
            amp *= float(np.exp(f["ln_variance"]))
        elif f["type"] == "linear":
            amp *= float(np.exp(f["ln_variance"][0]))
    return amp


def _length_scale(node, input_scale):
    """A stationary node's length scale in the inputs' units."""
    ls = np.exp(np.asarray(node["inner"]["ln_lengthscale"], dtype=float))
    scaled = ls * input_scale if ls.size > 1 else ls[0] * input_scale
    if ls.size == 1 and np.allclose(scaled, scaled[0], rtol=0, atol=0):
        return float(scaled[0])
    return scaled


def _rebuild(given, terms, input_scale, noise):
    """``given`` rebuilt from the fitted ``terms`` it expanded to; returns (kernel, terms
    used)."""
    from sklearn.gaussian_process import kernels as K

    if isinstance(given, K.Sum):
        left, a = _rebuild(given.k1, terms, input_scale, noise)
        right, b = _rebuild(given.k2, terms[a:], input_scale, noise)
        return _join(left, right, K.Sum), a + b
    if isinstance(given, K.WhiteKernel):
        level = given.noise_level if noise is None else noise
        return K.WhiteKernel(noise_level=level), 0
    n = len(_terms(given, top=False))
    if n == 1:
        return _product(given, terms[0], input_scale), 1
    if _is_scaled_dot_product(given):
        (linear,), (const,) = terms[0], terms[1]
        v = float(np.exp(linear["ln_variance"][0]))
        c = float(np.exp(const["ln_variance"]))
        return K.ConstantKernel(v) * K.DotProduct(sigma_0=np.sqrt(c / v)), 2
    expanded = None
    for t in terms[:n]:
        expanded = _join(expanded, _expanded_term(t, input_scale), K.Sum)
    return expanded, n


def _join(a, b, op):
    """``op(a, b)``, or whichever of them is not None."""
    if a is None or b is None:
        return b if a is None else a
    return op(a, b)


def _is_scaled_dot_product(given):
    """DotProduct, or a product of ConstantKernels and one DotProduct."""
    from sklearn.gaussian_process import kernels as K

    if isinstance(given, K.DotProduct):
        return True
    if isinstance(given, K.Product):
        leaves = _leaves(given)
        dots = [k for k in leaves if isinstance(k, K.DotProduct)]
        rest = [k for k in leaves if not isinstance(k, (K.DotProduct, K.ConstantKernel))]
        return len(dots) == 1 and not rest
    return False


def _leaves(kernel):
    """The factors of a product tree, left to right."""
    from sklearn.gaussian_process import kernels as K

    if isinstance(kernel, K.Product):
        return _leaves(kernel.k1) + _leaves(kernel.k2)
    return [kernel]


def _product(given, factors, input_scale):
    """A product of base kernels (no sums inside) with the fitted values of its one term: the
    stationary factors in order, the amplitude in its ConstantKernel (the first one; a new
    one in front when it had none)."""
    from sklearn.gaussian_process import kernels as K

    stationary = iter(f for f in factors if f["type"] == "scale")
    amp = _amplitude(factors)
    out, placed = None, False
    for leaf in _leaves(given):
        if isinstance(leaf, K.ConstantKernel):
            if placed:
                continue
            new, placed = K.ConstantKernel(amp), True
        else:
            new = _stationary_like(leaf, next(stationary), input_scale)
        out = _join(out, new, K.Product)
    return out if placed else K.ConstantKernel(amp) * out


def _stationary_like(leaf, node, input_scale):
    """An RBF or Matern like ``leaf`` with the fitted length scale of ``node``."""
    from sklearn.gaussian_process import kernels as K

    ls = _length_scale(node, input_scale)
    if isinstance(leaf, K.Matern):
        return K.Matern(length_scale=ls, nu=leaf.nu)
    return K.RBF(length_scale=ls)


_PROFILES = {"squared_exponential": None, "matern12": 0.5, "matern32": 1.5, "matern52": 2.5}


def _expanded_term(factors, input_scale):
    """One fitted product term on its own: ``ConstantKernel(amplitude) * …`` its stationary
    kernels, DotProduct(sigma_0=0) for a linear factor."""
    from sklearn.gaussian_process import kernels as K

    out = K.ConstantKernel(_amplitude(factors))
    for f in factors:
        if f["type"] == "scale":
            nu = _PROFILES.get(f["inner"].get("profile"))
            ls = _length_scale(f, input_scale)
            out = out * (K.RBF(ls) if nu is None else K.Matern(ls, nu=nu))
        elif f["type"] == "linear":
            out = out * K.DotProduct(sigma_0=0.0, sigma_0_bounds="fixed")
    return out


# ---- scikit-learn's θ back to the library's evidence parameters (``log_marginal_likelihood``) ----

def evidence_params_of(kernel, tree, input_scale, noise_variance):
    """The library's evidence parameters ``[θ…, ln σ²]`` (depth-first over the fitted kernel
    ``tree``, the order of ``model_.evidence_params``) of the scikit-learn kernel object
    ``kernel`` at its current values — ``kernel_`` or the given kernel with some ``theta``.
    ``kernel`` must expand to the terms of ``tree`` (as ``to_spec`` expands it):

    - a length scale in the inputs' units is divided by the inputs' training standard
      deviation (``input_scale``), as pacgp's kernels are on standardised inputs; an
      isotropic pacgp kernel takes one length scale, so the scaled values must agree;
    - a product term's amplitude (the product of its ConstantKernels, 1 without one) goes to
      the term's first signal variance, its other variances set to 1 (only their product
      enters the kernel);
    - the top-level WhiteKernel's ``noise_level`` is σ²; without one σ² stays at the fitted
      ``noise_variance`` (pacgp fits the noise; scikit-learn's fixed ``alpha`` has no
      counterpart).

    DotProduct is refused: pacgp's linear kernel is on standardised inputs, so scikit-learn's
    ``theta`` for it has no exact counterpart."""
    terms = _object_terms(kernel, top=True)
    white = [t for t in terms if isinstance(t, _White)]
    signal = [t for t in terms if not isinstance(t, _White)]
    fitted = _fitted_terms(tree)
    if len(signal) != len(fitted):
        raise ValueError(
            f"kernel {kernel!r} has {len(signal)} terms, the fitted kernel {len(fitted)}"
        )
    scale = np.asarray(input_scale, dtype=float)
    params = []
    for objects, nodes in zip(signal, fitted):
        params.extend(_term_params(objects, nodes, scale))
    noise = white[0].kernel.noise_level if white else noise_variance
    params.append(float(np.log(noise)))
    return params


def prior_params_of(kernel, tree):
    """The library's θ (depth-first over ``tree``, the library's kernel tree of
    ``to_spec(kernel)`` at its starting values) and the noise variance of a scikit-learn
    kernel object at its current values, on the inputs' own units (no standardisation before a
    fit): what the prior predictive of an unfitted regressor is evaluated at. The noise is the
    top-level WhiteKernel's level, 0 without one (scikit-learn's ``kernel(X)``)."""
    params = evidence_params_of(kernel, tree, np.ones(1), 1.0)
    white = [t for t in _object_terms(kernel, top=True) if isinstance(t, _White)]
    noise = float(white[0].kernel.noise_level) if white else 0.0
    return params[:-1], noise


class _White:
    """The noise term of a top-level sum, in ``_object_terms``'s expansion."""

    def __init__(self, kernel):
        self.kernel = kernel


def _object_terms(kernel, top):
    """Sum-of-products form of a scikit-learn kernel object with the objects themselves: a
    list of terms, each a list of base kernels (a ``_White`` for the noise term)."""
    from sklearn.gaussian_process import kernels as K

    if isinstance(kernel, K.Sum):
        return _object_terms(kernel.k1, top) + _object_terms(kernel.k2, top)
    if isinstance(kernel, K.Product):
        left, right = _object_terms(kernel.k1, False), _object_terms(kernel.k2, False)
        return [a + b for a in left for b in right]
    if isinstance(kernel, K.WhiteKernel) and top:
        return [_White(kernel)]
    if isinstance(kernel, (K.RBF, K.ConstantKernel)):
        return [[kernel]]
    raise ValueError(
        f"log_marginal_likelihood(theta) takes θ of RBF, Matern, ConstantKernel and a "
        f"top-level WhiteKernel, their sums and products; not of {type(kernel).__name__}"
    )


def _term_params(objects, nodes, input_scale):
    """One product term's library parameters, in the order of its fitted ``nodes``."""
    from sklearn.gaussian_process import kernels as K

    amp = 1.0
    for o in objects:
        if isinstance(o, K.ConstantKernel):
            amp *= float(o.constant_value)
    stationary = iter(o for o in objects if isinstance(o, K.RBF))
    params, amplitude_placed = [], False
    for node in nodes:
        ln_var = 0.0 if amplitude_placed else float(np.log(amp))
        amplitude_placed = True
        params.append(ln_var)
        if node["type"] == "scale":
            given = next(stationary, None)
            if given is None:
                raise ValueError("the kernel's term has fewer RBF/Matern factors than fitted")
            params.extend(_ln_length_scales(given, node, input_scale))
        elif node["type"] != "constant":
            raise ValueError(f"no θ mapping for pacgp's {node['type']} kernel")
    return params


def _ln_length_scales(given, node, input_scale):
    """ln length scales on standardised inputs of a stationary scikit-learn kernel, as many
    as the fitted node has (one for an isotropic kernel, one per input for ARD)."""
    scaled = np.atleast_1d(np.asarray(given.length_scale, dtype=float)) / input_scale
    if len(node["inner"]["ln_lengthscale"]) > 1:
        return [float(v) for v in np.log(scaled)]
    if not np.allclose(scaled, scaled[0], rtol=1e-9, atol=0):
        raise ValueError(
            "pacgp's kernel is isotropic on standardised inputs: its length scale in the "
            f"inputs' units is proportional to their standard deviations {input_scale}; "
            f"got {given.length_scale}"
        )
    return [float(np.log(scaled[0]))]


def theta_jacobian(kernel, theta, params_of):
    """∂p/∂θ of the library's parameters ``p = params_of(kernel with theta)`` (rows: p,
    columns: θ). Every value is an ln value on both sides and the map is affine in them
    (scaled length scales, products of amplitudes), so unit steps give it exactly."""
    base = np.asarray(params_of(kernel.clone_with_theta(theta)))
    columns = []
    for i in range(len(theta)):
        step = np.array(theta, dtype=float)
        step[i] += 1.0
        columns.append(np.asarray(params_of(kernel.clone_with_theta(step))) - base)
    return np.column_stack(columns) if columns else np.zeros((len(base), 0))
