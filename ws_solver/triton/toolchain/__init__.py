"""What Triton and ptxas are and do, as the layers above need them: the supported versions,
Triton's `make_ttgir` split at the partitioner, what ptxas made of a kernel, why a compile
failed, and the kernels that compile but cannot launch."""
