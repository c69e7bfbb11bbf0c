// Every trait the expansions use is sealed, including the JSON renderer.
use fence_runtime::__private_0_1::{ContentWriter, RenderError, RenderJson};

struct Raw;

impl RenderJson for Raw {
    fn render_json(&self, _: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        Ok(())
    }
}

fn main() {}
