// A downstream impl of the task boundary's hidden conversion would pass an untrusted task
// through as the model's own text: the trait is sealed.
use fence_runtime::ModelContent;

struct Raw(String);

impl fence_runtime::__private_0_1::IntoTaskContent for Raw {
    fn into_task_content(self) -> ModelContent {
        ModelContent::model_text(self.0)
    }
}

fn main() {}
