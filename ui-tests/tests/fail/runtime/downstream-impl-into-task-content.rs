// A downstream impl of the task boundary's hidden conversion would pass an untrusted task
// through as the model's own text: the trait is sealed, by a method parameter whose type is in
// a private module.
use fence_runtime::ModelContent;

struct Raw(String);

impl fence_runtime::__private_0_1::FenceableTaskPayload for Raw {
    fn into_task_content(self, _: fence_runtime::__private_0_1::sealed::Seal) -> ModelContent {
        ModelContent::model_text(self.0)
    }
}

fn main() {}
