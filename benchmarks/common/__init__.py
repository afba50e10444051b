"""The bottom of the benchmarks: what the other folders share. The results archive, statistics,
the bench's strategies and sweep variants, and compiling one variant (CPU side; also Triton's
own sm_90 route, which a compile may take)."""
