#!/usr/bin/env python3
"""The ideal and the limit of bench/testbed_vs_ddp.sh's table: what hosts of known speeds could train per second.

ideal: the sum over the hosts of r_h, what host h trains alone at its quota (samples/s): no synchronisation.
limit: the ideal once every host pays one all-reduce of the model per step in CPU: c_h CPU-seconds at a quota
of q_h cores take c_h / q_h seconds of host h's step. In a step of global batch B host h trains b_h samples,
b_h / r_h + c_h / q_h = T for every host and sum b_h = B, so T = (B + sum_h r_h c_h / q_h) / sum_h r_h and the
limit is B / T. A host whose all-reduce alone outlasts that T trains nothing (b_h = 0) and the others share B
(water-filling); every host still all-reduces, so T is at least max_h c_h / q_h.
"""


def ideal(rates):
    return sum(rates)


def limit(rates, cpu_seconds, quotas, batch):
    """samples/s; rates, cpu_seconds and quotas one per host (quotas in cores)."""
    if not (len(rates) == len(cpu_seconds) == len(quotas)) or not rates or batch <= 0:
        raise ValueError("limit: one rate, CPU cost and quota per host, and a positive batch")
    sync = [c / q for c, q in zip(cpu_seconds, quotas)]  # seconds of host h's step its all-reduce takes
    # The hosts that train are those whose all-reduce ends first: add them in that order while T stays past
    # the next one's all-reduce.
    order = sorted(range(len(rates)), key=lambda h: sync[h])
    rate_sum = weighted = 0.0
    step = None
    for k, h in enumerate(order):
        rate_sum += rates[h]
        weighted += rates[h] * sync[h]
        step = (batch + weighted) / rate_sum
        if k + 1 == len(order) or step <= sync[order[k + 1]]:
            break
    return batch / max(step, max(sync))
