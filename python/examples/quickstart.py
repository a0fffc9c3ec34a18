"""The README's example: PAC-GP on boston in a scikit-learn Pipeline, its certificate, a pickle
round trip and a grid search over ε (run from the repository's root)."""
import pickle
import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
import pacgp

data = np.loadtxt("data/boston-housing/boston.csv", delimiter=",", skiprows=1)
X, y = data[:, :-1], data[:, -1]  # 13 inputs; MEDV in k$
model = make_pipeline(StandardScaler(), pacgp.PACGPRegressor(epsilon=3.0)).fit(X, y)
print("bound on P(|y - f(x)| > 3):", model[-1].certificate_["bound"], "LOO:", model[-1].loo_["error"])
print("same after pickling:", (pickle.loads(pickle.dumps(model)).predict(X) == model.predict(X)).all())
search = GridSearchCV(model, {"pacgpregressor__epsilon": [2.0, 3.0, 5.0]}, n_jobs=2).fit(X, y)
print("best ε:", search.best_params_, "R²:", search.best_score_)
