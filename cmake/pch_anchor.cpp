// Anchors the shared precompiled header (cmake/balancenet_pch.h) to a target that every module reuses.
