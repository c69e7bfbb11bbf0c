// Below `#[tool]`, which has already been expanded, the boundary cannot see the tool's name: on
// a method that is a compile error at the boundary, saying to swap the two.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PathRequest {
    path: String,
}

struct Server;

#[tool_router]
impl Server {
    #[tool]
    #[fence_boundary]
    fn read_file(&self, Parameters(request): Parameters<PathRequest>) -> std::io::Result<String> {
        std::fs::read_to_string(request.path)
    }

    #[tool(name = "fetch")]
    #[fence_boundary(tool = "fetch")]
    async fn web_fetch(&self, Parameters(request): Parameters<PathRequest>) -> String {
        request.path
    }
}

fn main() {
    let _ = Server::tool_router();
}
