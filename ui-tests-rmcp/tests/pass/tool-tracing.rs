#![deny(warnings)]

// `#[tracing::instrument]` on an rmcp tool with a boundary, above, between and below.

use fence_runtime::{ToolOutput, fence_boundary};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    text: String,
}

struct Server;

#[tool_router]
impl Server {
    /// Above both.
    #[tracing::instrument(skip(self, query), err)]
    #[fence_boundary]
    #[tool]
    async fn above(&self, Parameters(query): Parameters<Query>) -> Result<String, std::io::Error> {
        tracing::info!("above");
        Ok(query.text)
    }

    #[fence_boundary]
    #[tracing::instrument(skip_all)]
    #[tool]
    /// Between them.
    fn between(&self, Parameters(query): Parameters<Query>) -> String {
        query.text
    }

    #[fence_boundary]
    #[tool]
    #[tracing::instrument(skip_all, ret)]
    /// Below both.
    async fn below(&self, Parameters(query): Parameters<Query>) -> String {
        query.text
    }
}

fn query() -> Parameters<Query> {
    Parameters(Query {
        text: "t".to_owned(),
    })
}

fn main() {
    let _ = Server::tool_router();
    // rmcp 3.11 keeps a description only from doc lines after the function's other attributes.
    let described = [
        ("above", "Above both."),
        ("between", "Between them."),
        ("below", "Below both."),
    ];
    for (name, description) in described {
        let tool = Server::tool_router().get(name).cloned().unwrap();
        assert_eq!(tool.description.as_deref(), Some(description));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outputs: [ToolOutput; 3] = runtime.block_on(async {
        [
            Server.above(query()).await,
            Server.between(query()),
            Server.below(query()).await,
        ]
    });
    let sources = outputs.map(|output| output.content().fence_source().map(str::to_owned));
    assert_eq!(
        sources,
        [
            Some("tool:above".to_owned()),
            Some("tool:between".to_owned()),
            Some("tool:below".to_owned())
        ]
    );
}
