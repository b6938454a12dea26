"""The Soft-RoCE lab: two Debian VMs (qemu) with rdma_rxe, linked by a wire: a unix socketpair by
default (lossless, back-pressured), or UDP datagrams on 127.0.0.1 (``--wire udp``).

``image`` builds and caches the root filesystem, ``qemu`` boots and stops VMs, ``qga`` runs commands in a guest
through qemu-guest-agent, ``instance`` ties them into ``up``/``down``/``status``/``exec``.
"""
