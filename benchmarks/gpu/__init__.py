"""What runs on the GPU machine: verifying and timing compiled variants (the bench, the plan
sweep, hand-edited TTGIR or PTX, Triton's Hopper route), profiling, the shell scripts that set
the machine up, and their JSON inputs. The top layer: may import from every other one."""
