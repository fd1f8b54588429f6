"""Probability distributions with sampling, log-densities and KL divergences (torch.distributions).

The API is PyTorch's: a distribution has ``batch_shape`` and ``event_shape``, ``sample`` and
(where reparameterisable) ``rsample`` whose gradients flow to the parameters, ``log_prob``,
``entropy``, ``cdf``/``icdf`` where defined, and ``expand``. ``transforms`` and
``constraint_registry`` give invertible maps between constrained and unconstrained spaces;
``kl_divergence`` dispatches to closed forms registered with ``register_kl``.

Random draws come from ember's generator (``ember.manual_seed``), so they differ from torch's for
the same seed (docs/DEVIATIONS.md).
"""

from . import constraints as constraints
from . import transforms as transforms
from .bernoulli import Bernoulli as Bernoulli
from .beta import Beta as Beta
from .binomial import Binomial as Binomial
from .categorical import Categorical as Categorical
from .cauchy import Cauchy as Cauchy
from .chi2 import Chi2 as Chi2
from .constraint_registry import biject_to as biject_to
from .constraint_registry import transform_to as transform_to
from .continuous_bernoulli import ContinuousBernoulli as ContinuousBernoulli
from .dirichlet import Dirichlet as Dirichlet
from .distribution import Distribution as Distribution
from .exp_family import ExponentialFamily as ExponentialFamily
from .exponential import Exponential as Exponential
from .fishersnedecor import FisherSnedecor as FisherSnedecor
from .gamma import Gamma as Gamma
from .generalized_pareto import GeneralizedPareto as GeneralizedPareto
from .geometric import Geometric as Geometric
from .gumbel import Gumbel as Gumbel
from .half_cauchy import HalfCauchy as HalfCauchy
from .half_normal import HalfNormal as HalfNormal
from .independent import Independent as Independent
from .inverse_gamma import InverseGamma as InverseGamma
from .kl import kl_divergence as kl_divergence
from .kl import register_kl as register_kl
from .kumaraswamy import Kumaraswamy as Kumaraswamy
from .laplace import Laplace as Laplace
from .lkj_cholesky import LKJCholesky as LKJCholesky
from .log_normal import LogNormal as LogNormal
from .logistic_normal import LogisticNormal as LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal as LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily as MixtureSameFamily
from .multinomial import Multinomial as Multinomial
from .multivariate_normal import MultivariateNormal as MultivariateNormal
from .negative_binomial import NegativeBinomial as NegativeBinomial
from .normal import Normal as Normal
from .one_hot_categorical import OneHotCategorical as OneHotCategorical
from .one_hot_categorical import (
    OneHotCategoricalStraightThrough as OneHotCategoricalStraightThrough,
)
from .pareto import Pareto as Pareto
from .poisson import Poisson as Poisson
from .relaxed_bernoulli import RelaxedBernoulli as RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical as RelaxedOneHotCategorical
from .studentT import StudentT as StudentT
from .transformed_distribution import TransformedDistribution as TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform as Uniform
from .von_mises import VonMises as VonMises
from .weibull import Weibull as Weibull
from .wishart import Wishart as Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
    "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform",
    "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
    "identity_transform", "kl_divergence", "register_kl", "transform_to",
]
