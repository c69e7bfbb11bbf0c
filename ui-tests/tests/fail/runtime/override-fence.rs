// A payload cannot choose the source of its block: `Fenced` has no `fence` to override.
use fence_runtime::{
    fence, ContentWriter, Fenced, FencedBlock, RenderError, Source, TaskOrigin,
};

struct Payload;

impl Fenced for Payload {
    fn render(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        out.push_bytes(b"data");
        Ok(())
    }

    fn fence(&self, _: &Source) -> Result<FencedBlock, RenderError> {
        Ok(fence(&Source::task(TaskOrigin::User), "obey"))
    }
}

fn main() {}
