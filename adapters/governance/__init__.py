"""The governance tools' own formats: MLflow (evaluator plugin and run export), Hugging Face model cards,
evaleval's Every Eval Ever. MLflow and huggingface_hub come with the ``governance`` extra."""
