"""OpenAI-compatible remote APIs (vLLM, TGI, llama.cpp server, commercial endpoints).

``httpx`` is imported only inside the client, so selecting another backend never loads it.
"""
