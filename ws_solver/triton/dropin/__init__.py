"""The drop-in: `enable()` and the compile hook it installs (`switch`, `kernel_compile`),
what one enable() is set to do and did (`session`), the decision checked by ptxas, and the
compile log."""
