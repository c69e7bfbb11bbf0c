// fence-runtime without its `rmcp` feature, and the boundary below `#[tool]`, which has already
// been expanded: the error says to swap the attributes and to enable the feature. rmcp's route
// error comes too, since the boundary cannot see that this is an rmcp tool.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FetchRequest {
    url: String,
}

struct Server;

#[tool_router]
impl Server {
    /// Fetches a page.
    #[tool]
    #[fence_boundary]
    async fn web_fetch(&self, Parameters(request): Parameters<FetchRequest>) -> String {
        request.url
    }
}

fn main() {
    let _ = Server::tool_router();
}
