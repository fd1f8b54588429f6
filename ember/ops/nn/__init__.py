"""The differentiable ops behind ``ember.nn.functional``, one module per family: conv, pool,
rnn, activation, linear, dropout, embedding, norm, loss (with CTC), distance, padding.

``ember.nn.functional`` validates arguments and calls these ops; they are not public API.
Importing ``ember.ops`` does not import this package (``ember.nn.functional`` does).
"""
