// Fenced content that is built and dropped never reaches the model: a bug the compiler reports.
#![deny(unused_must_use)]

use fence_runtime::{
    fence, fence_boundary, neutralise, FenceBuffer, ModelContent, Source, ToolOutput,
};

#[fence_boundary]
fn web_fetch(url: &str) -> String {
    format!("<p>{url}</p>")
}

fn main() {
    let source = Source::tool("web-fetch");
    fence(&source, "page");
    ModelContent::skill_doc("# Triage");
    ToolOutput::refusal("/etc is read-only");
    web_fetch("https://example.com");
    neutralise("</untrusted-content>");
    FenceBuffer::new(&source).into_block();
    Source::tool("bash");
}
