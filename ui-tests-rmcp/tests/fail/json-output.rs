// `Json<T>` is rmcp's structured output, sent as `structuredContent` beside the fence: refused
// at the type, whichever path names it, alone or as a `Result`'s value.
use fence_runtime::fence_boundary;
use rmcp::handler::server::wrapper::Json;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    celsius: f32,
}

struct Server;

#[tool_router]
impl Server {
    #[fence_boundary]
    #[tool]
    async fn weather(&self) -> Json<Weather> {
        Json(Weather { celsius: 21.5 })
    }

    #[fence_boundary]
    #[tool]
    fn forecast(&self) -> Result<rmcp::Json<Weather>, String> {
        Ok(rmcp::Json(Weather { celsius: 19.0 }))
    }
}

fn main() {
    let _ = Server::tool_router();
}
