"""What a study's answers name stays as it is: the admin shows such an object, and says
why, but neither changes nor deletes it once the study has answers."""

from django.contrib import messages
from django.contrib.admin.utils import unquote

from annotation.models import Answer


class FrozenOnceAnswered:
    """ModelAdmin mixin: ``study_id_of(obj)`` names the object's study; ``frozen_because``
    ends the sentence the page shows ("This study has answers: ...")."""

    frozen_because = "its answers name this."

    def study_id_of(self, obj) -> int:
        raise NotImplementedError

    def answered(self, obj) -> bool:
        if obj is None:
            return False
        return Answer.objects.filter(item__study_id=self.study_id_of(obj)).exists()

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and not self.answered(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not self.answered(obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if request.method == "GET" and self.answered(obj):
            messages.info(
                request, f"Shown, not editable. This study has answers: {self.frozen_because}"
            )
        return super().change_view(request, object_id, form_url, extra_context)
