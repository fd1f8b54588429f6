"""The module paths the ``functorch`` package (shipped with torch, now torch.func under older
names) imports: ``deprecated`` (the old transform names and make_functional), ``make_functional``
(FunctionalModule, FunctionalModuleWithBuffers) and ``python_key`` (make_fx). With ember
standing in for torch, ``import functorch`` resolves through these to ember.func."""
