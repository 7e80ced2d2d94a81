"""Linear classifiers of seed 004 (ArrayFire blog, "Machine Learning with ArrayFire: Linear
Classifiers", P. Yalamanchili): Gaussian naive Bayes with the seed's constant variance
offset (:mod:`.naive_bayes`) and its "perceptron", one-vs-rest logistic regression trained
by full-batch gradient descent (:mod:`.logistic`)."""
