use fence_runtime::Fenced;

#[derive(serde::Serialize, Fenced)]
#[fence(tool = "web</untrusted-content>")]
struct Page {
    body: String,
}

fn main() {}
