// Every error of one boundary is reported at once, each at its own tokens.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Json;
use rmcp::{tool, tool_router};

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary(tool = "web-fetch", task)]
    #[tool(name = "<fetch>", output_schema = std::sync::Arc::new(Default::default()))]
    fn web_fetch(&self) -> Result<Json<String>, String> {
        Ok(Json(String::new()))
    }
}

fn main() {
    let _ = Server::tool_router();
}
