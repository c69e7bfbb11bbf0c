//! Integration tests of `fence-runtime` and `fence-surfaces`, written as a downstream crate
//! would: one binary, one module per behaviour, so the suite links once.

mod allocations;
mod async_streaming;
mod boundary_shapes;
mod casing_sweep;
mod composition;
mod derive_rendering;
mod derive_tasks;
mod exact_outputs;
mod fence_writer;
mod guarantee;
mod hygiene;
mod model_content;
mod parse;
mod properties;
mod readme;
mod rmcp_client;
mod rmcp_duplex;
mod rmcp_stdio;
mod streaming_buffer;
mod streaming_properties;
mod streaming_splits;
mod surfaces_exempt;
mod surfaces_fixture;
mod surfaces_formats;
mod surfaces_golden;
mod surfaces_holes;
mod surfaces_incremental;
mod surfaces_parts;
mod surfaces_proptest;
mod surfaces_readers;
mod surfaces_sources;
mod surfaces_sse;
mod surfaces_unreadable;
mod surfaces_verify;
mod trust;
